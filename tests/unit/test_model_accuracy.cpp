// The model against the rows measured on 2 x H200 (evidence h200x2-20261130-r7 and -r9, kept in
// tests/fixtures):
// every row of our ring and tree at >= 64 MiB, predicted offline as `run --model` predicts it (the
// run's preset, its links.json ceilings, the row as recorded), is within 15 % of its busbw.
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/model/run_model.h"

namespace ccbench {
namespace {

constexpr std::uint64_t kFrom = 64ull << 20;  // the accuracy target's smallest size
constexpr double kWithin = 0.15;

struct Recorded {
  const char* folder;  // under tests/fixtures, with run.json and links.json
  const char* preset;  // the --model of that run
};

std::string accuracy_fixture(const std::string& rel) {
  return std::string(CCBENCH_SOURCE_DIR) + "/tests/fixtures/" + rel;
}

Json read_fixture_json(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in, nullptr, false);
}

TEST(ModelAccuracy, OurRingAndTreeOn2xH200AreWithin15PercentFrom64MiB) {
  const Recorded runs[] = {{"h200x2-20261130-r7/model-p2p", "h200x2-nv18"},
                           {"h200x2-20261130-r9/host", "h200x2-host"}};
  int checked = 0;
  for (const Recorded& run : runs) {
    const Json doc = read_fixture_json(accuracy_fixture(std::string(run.folder) + "/run.json"));
    ASSERT_TRUE(doc.is_object() && doc.contains("rows")) << run.folder;
    const RunModel model = load_run_model(run.preset);
    const auto ceilings = read_link_ceilings(accuracy_fixture(std::string(run.folder) + "/links.json"));
    for (const Json& row : doc["rows"]) {
      const std::string impl = row.value("impl", "");
      if ((impl != "ring" && impl != "tree") || row.value("bytes", std::uint64_t{0}) < kFrom) continue;
      const RowPrediction p = predict_row(model, record_from_json(row), ceilings);
      ASSERT_TRUE(p.busbw_gbps) << p.reason;
      const double busbw = row.value("busbw_gbps", 0.0), eff = busbw / *p.busbw_gbps;
      std::cout << fmt::format("{} {} {} {} {}M {}: measured {:.1f} predicted {:.1f} efficiency {:.3f} (recorded {:.3f})\n",
                               run.folder, row.value("collective", ""), impl, row.value("transport", ""),
                               row.value("bytes", std::uint64_t{0}) >> 20,
                               row.value("in_place", false) ? "in-place" : "out-of-place", busbw, *p.busbw_gbps, eff,
                               row.value("model_efficiency", 0.0));
      EXPECT_NEAR(eff, 1.0, kWithin) << row.dump();
      ++checked;
    }
  }
  EXPECT_EQ(checked, 34);  // 24 p2p rows (ring and tree, all-reduce and all-gather) and 10 host rows
}

}  // namespace
}  // namespace ccbench
