// results/: the comparison table after a run: each implementation's busbw per size against the baseline.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "golden.h"

#include "results/compare.h"
#include "core/error.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

RunRecord rec(const std::string& impl, std::uint64_t bytes, double busbw, bool in_place = false) {
  return RecordBuilder()
      .impl(impl)
      .transport(impl == "nccl" ? "nccl" : "cuda_ipc")
      .device("gpu")
      .float_bytes(bytes)
      .in_place(in_place)
      .ranks(2, 2, 1)
      .busbw(busbw, busbw + 1);  // the median's figure told apart
}

// ---------------------------------------------------------------------------------------------
// comparison_table
// ---------------------------------------------------------------------------------------------

TEST(ComparisonTable, Golden) {
  std::vector<RunRecord> rows = {
      rec("nccl", 1 << 20, 150), rec("ring", 1 << 20, 120), rec("tree", 1 << 20, 90),
      rec("nccl", 1 << 30, 340), rec("ring", 1 << 30, 350.5),
      rec("nccl", 1 << 20, 149, true), rec("ring", 1 << 20, 121, true),
      rec("nccl", 64 << 20, 300),  // sizes are sorted; tree never ran at 64 MiB
      rec("ring", 64 << 20, 0),
  };
  rows.back().status = RowStatus::wrong;
  rows.back().wrong = 3;
  rows.push_back(rec("ring", 8, 0, true));
  rows.back().status = RowStatus::skipped;
  rows.push_back(rec("tree", 1 << 30, 200));
  rows.back().busbw_median_gbps = 310;  // a noisy batch: the median is shown beside it
  golden::expect_matches("comparison.txt", comparison_table(rows, "nccl", false));  // the figure the run prints
}

TEST(ComparisonTable, RatiosToTheBaseline) {
  const std::vector<RunRecord> rows = {rec("nccl", 1024, 100), rec("ring", 1024, 104), rec("tree", 1024, 50)};
  const std::string avg = comparison_table(rows, "nccl", false);
  EXPECT_NE(avg.find("batch average"), std::string::npos) << avg;
  EXPECT_NE(avg.find("\n# 1 KiB  100.00  104.00 (1.04x)  50.00 (0.50x)\n"), std::string::npos) << avg;
  const std::string med = comparison_table(rows, "nccl", true);
  EXPECT_NE(med.find("101.00  105.00 (1.04x)"), std::string::npos) << med;
  // Every line is a comment line.
  std::istringstream lines(med);
  for (std::string l; std::getline(lines, l);) EXPECT_TRUE(l.starts_with("#")) << l;
  EXPECT_NE(med.find("# allreduce  dtype float  op sum  mode eager  out-of-place  ranks 2 (2 per node)  device gpu"),
            std::string::npos)
      << med;
}

TEST(ComparisonTable, NoBaselineMeansNoRatios) {
  const std::vector<RunRecord> rows = {rec("ring", 1024, 100), rec("tree", 1024, 104)};
  const std::string t = comparison_table(rows, "nccl", false);
  EXPECT_NE(t.find("100.00  104.00"), std::string::npos) << t;
  EXPECT_EQ(t.find("x)"), std::string::npos) << t;
  EXPECT_EQ(t.find("ratio"), std::string::npos) << t;
}

TEST(ComparisonTable, NothingToCompare) {
  EXPECT_EQ(comparison_table({}, "nccl", true), "");
  // One implementation per block: out-of-place ring only, in-place nccl only.
  EXPECT_EQ(comparison_table({rec("ring", 1024, 1), rec("ring", 2048, 2), rec("nccl", 1024, 3, true)}, "nccl", true),
            "");
}

TEST(ComparisonTable, OneImplementationOverTwoTransportsGetsTwoColumns) {
  RunRecord shm = rec("ring", 1024, 10), ipc = rec("ring", 1024, 20);
  shm.transport = "host_staged";
  const std::string t = comparison_table({ipc, shm}, "ring", false);
  EXPECT_NE(t.find("ring/cuda_ipc  ring/host_staged"), std::string::npos) << t;
  EXPECT_NE(t.find("\n# 1 KiB          20.00     10.00 (0.50x)\n"), std::string::npos) << t;
}

}  // namespace
}  // namespace ccbench
