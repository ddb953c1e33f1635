// Training conditions without a GPU: --nccl-config combinations, the --overlap load's spec and
// its rate in a window, the energy figures (the counter played back from recorded answers), the
// rows' new columns, their options and acceptance rules.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collectives/implementation.h"
#include "collectives/nccl/nccl_config.h"
#include "core/build_config.h"
#include "core/error.h"
#include "harness/app/cli.h"
#include "harness/health/energy_meter.h"
#include "harness/overlap/overlap.h"
#include "harness/engine/runner.h"
#include "harness/engine/startup.h"
#include "results/accept.h"
#include "results/record.h"
#include "telemetry/energy.h"
#include "telemetry/recorded_source.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

template <typename F>
void expect_usage(F&& f, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "accepted; expected a usage error with '" << text << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

// ---- --nccl-config -------------------------------------------------------------------------

TEST(NcclConfig, EveryCombinationInOrderWithItsLabel) {
  const auto c = nccl_config_combinations({"maxCTAs=4,8", "NCCL_ALGO=Ring,Tree", "CTAPolicy=efficiency"});
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].label(), "maxCTAs=4;NCCL_ALGO=Ring;CTAPolicy=efficiency");
  EXPECT_EQ(c[1].label(), "maxCTAs=4;NCCL_ALGO=Tree;CTAPolicy=efficiency");
  EXPECT_EQ(c[3].label(), "maxCTAs=8;NCCL_ALGO=Tree;CTAPolicy=efficiency");
  EXPECT_TRUE(nccl_config_combinations({}).empty());
  EXPECT_EQ(nccl_cta_policy("efficiency"), 1);
  EXPECT_EQ(nccl_cta_policy("zero"), 2);
  EXPECT_EQ(nccl_cta_policy("1"), 1);
  EXPECT_EQ(nccl_config_combinations({"netName=Socket,IB"})[1].settings[0].value, "IB");
  const auto with_default = nccl_config_combinations({"maxCTAs=default,4"});
  EXPECT_TRUE(with_default[0].settings[0].is_default());
  EXPECT_EQ(with_default[0].label(), "maxCTAs=default");
}

TEST(NcclConfig, BadAxesAreUsageErrorsSayingWhatIsValid) {
  expect_usage([] { nccl_config_combinations({"maxCtas=4"}); }, "KEY one of minCTAs, maxCTAs");
  expect_usage([] { nccl_config_combinations({"maxCTAs"}); }, "expected KEY=V1,V2");
  expect_usage([] { nccl_config_combinations({"maxCTAs=4", "maxCTAs=8"}); }, "maxCTAs given twice");
  expect_usage([] { nccl_config_combinations({"maxCTA=4"}); }, "(did you mean 'maxCTAs'?)");
  expect_usage([] { nccl_config_combinations({"maxCTAs=four"}); }, "a whole number from 1 to 64, or default");
  expect_usage([] { nccl_config_combinations({"maxCTAs=4,"}); }, "an empty value");
  expect_usage([] { nccl_config_combinations({"CTAPolicy=fast"}); }, "efficiency, zero, or 0 to 2, or default");
  expect_usage([] { nccl_config_combinations({"CTAPolicy=3"}); }, "'3' is not valid for CTAPolicy");
  // The values NCCL would clamp (src/init.cc): CTAs 1 to 64, cluster sizes 0 to 8; an 8-bit class.
  expect_usage([] { nccl_config_combinations({"minCTAs=0"}); }, "'0' is not valid for minCTAs");
  expect_usage([] { nccl_config_combinations({"maxCTAs=65"}); }, "'65' is not valid for maxCTAs");
  expect_usage([] { nccl_config_combinations({"cgaClusterSize=9"}); }, "from 0 to 8");
  expect_usage([] { nccl_config_combinations({"trafficClass=256"}); }, "from 0 to 255");
  EXPECT_EQ(nccl_config_combinations({"minCTAs=64", "cgaClusterSize=0", "trafficClass=255"}).size(), 1u);
  expect_usage([] { nccl_config_combinations({"minCTAs=1,2,3,4,5,6,7,8", "maxCTAs=1,2,3,4,5,6,7,8,9"}); },
               "more than 64 combinations");
}

// minCTAs above maxCTAs: that combination is not what its label says (NCCL would change one), so
// it is skipped with the reason, the others of the sweep measured.
TEST(NcclConfig, MinAboveMaxIsNamedPerCombination) {
  const auto c = nccl_config_combinations({"minCTAs=default,8", "maxCTAs=4,16"});
  ASSERT_EQ(c.size(), 4u);
  std::vector<std::string> conflicts;
  for (const NcclConfig& x : c)
    if (auto why = nccl_config_conflict(x)) conflicts.push_back(x.label() + ": " + *why);
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_EQ(conflicts[0], "minCTAs=8;maxCTAs=4: --nccl-config minCTAs=8 is above maxCTAs=4: NCCL would change one "
                          "of them, so this combination is not measured");
}

// NCCL implementations become one per configuration, in order, named as before and labelled;
// the others stay as they are. Without NCCL built in there is nothing to expand.
TEST(NcclConfig, PlanHasOneCommunicatorPerCombination) {
  SweepPlan plan;
  plan.device = Device::gpu;
  for (ImplId id : {ImplId::nccl, ImplId::ring, ImplId::nccl_ring})
    if (const ImplInfo* i = find_implementation(id, Device::gpu)) plan.impls.push_back(i);
  const auto configs = nccl_config_combinations({"maxCTAs=4,8"});
  const SweepPlan out = with_nccl_configs(plan, configs);
  std::vector<std::string> got;
  for (const ImplInfo* i : out.impls) got.push_back(i->name + "[" + i->setting + "]");
#if CCBENCH_HAVE_NCCL
  EXPECT_EQ(got, (std::vector<std::string>{"nccl[maxCTAs=4]", "nccl[maxCTAs=8]", "ring[]", "nccl-ring[maxCTAs=4]",
                                           "nccl-ring[maxCTAs=8]"}));
  EXPECT_EQ(out.made.size(), 4u);
#else
  EXPECT_EQ(got.size(), plan.impls.size());  // NCCL left out of this build: its entries cannot run anyway
#endif
  EXPECT_EQ(with_nccl_configs(plan, {}).impls, plan.impls);
}

// ---- --overlap -----------------------------------------------------------------------------

TEST(Overlap, SpecsLabelsUnitsAndWork) {
  EXPECT_EQ(parse_overlap("").kind, LoadKind::none);
  const OverlapSpec g = parse_overlap("gemm");
  EXPECT_EQ(g.size, kDefaultGemmN);
  EXPECT_EQ(g.room_sms, kDefaultRoomSms);
  EXPECT_EQ(load_label(g), "gemm bf16 8192x8192x8192, 16 SMs left");
  EXPECT_EQ(load_label({LoadKind::gemm, 8192, 0}), "gemm bf16 8192x8192x8192");  // the load takes every SM
  EXPECT_STREQ(load_unit(g), "TFLOPS");
  EXPECT_DOUBLE_EQ(load_work(g), 2.0 * 8192.0 * 8192.0 * 8192.0 / 1e12);
  EXPECT_EQ(parse_overlap("gemm:4096").size, 4096u);
  const OverlapSpec m = parse_overlap("membw:2G");
  EXPECT_EQ(m.size, 2ull << 30);
  EXPECT_EQ(load_label(m), "membw 2G, 16 SMs left");
  EXPECT_STREQ(load_unit(m), "GB/s");
  EXPECT_DOUBLE_EQ(load_work(m), 2.0 * (2ull << 30) / 1e9);
  expect_usage([] { parse_overlap("gemm:1000"); }, "multiple of 64");
  expect_usage([] { parse_overlap("membw:1K"); }, "from 1M to 64G");
  expect_usage([] { parse_overlap("fft"); }, "unknown load 'fft' (valid: gemm[:N] (N from 256 to 65536");
}

// Spans count in proportion to the part of them inside the window; a mark not known yet when a
// span is added lies after it.
double window_rate(const std::vector<std::pair<double, double>>& spans, std::optional<double> begin,
                   std::optional<double> end, std::size_t known_from = 0) {
  WindowWork w;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const std::array<std::optional<double>, 2> at = i >= known_from ? std::array{begin, end}
                                                                     : std::array<std::optional<double>, 2>{};
    w.add(spans[i].first, spans[i].second, 1.0, at);
  }
  return w.rate({begin, end});
}

TEST(Overlap, WindowWorkCountsPartsOfSpans) {
  const std::vector<std::pair<double, double>> back_to_back = {{0, 10}, {10, 20}, {20, 30}, {30, 40}};
  EXPECT_DOUBLE_EQ(window_rate(back_to_back, 0, 40), 100.0);  // 4 units in 40 ms
  EXPECT_DOUBLE_EQ(window_rate(back_to_back, 5, 25), 100.0);  // half, one, half: 2 in 20 ms
  const std::vector<std::pair<double, double>> slowed = {{0, 10}, {10, 40}};  // the second ran 3x slower
  EXPECT_DOUBLE_EQ(window_rate(slowed, 10, 40), 1.0 / 0.03);
  EXPECT_DOUBLE_EQ(window_rate(back_to_back, 50, 60), 0.0);  // nothing ran in it
  EXPECT_DOUBLE_EQ(window_rate(back_to_back, 5, 5), 0.0);    // no window
  EXPECT_DOUBLE_EQ(window_rate(back_to_back, 5, std::nullopt), 0.0);  // never closed
  // The marks learnt only at the third span: the first two lay before both, as the feeder knows.
  EXPECT_DOUBLE_EQ(window_rate(back_to_back, 25, 35, 2), 100.0);
  // A gap between spans (the load starved) is work lost, not averaged away.
  EXPECT_DOUBLE_EQ(window_rate({{0, 10}, {20, 30}}, 0, 30), 2.0 / 0.03);
}

// Small launches go in spans of >= kSpanMs; >= kAheadMs of them queued, within the ring.
TEST(Overlap, FeedPlanSizesTheQueueByTime) {
  const FeedPlan gemm = feed_plan(1.3);  // gemm:8192 on an H200
  EXPECT_EQ(gemm.launches_per_span, 1);
  EXPECT_EQ(gemm.spans_ahead, 4);  // 5.2 ms queued
  const FeedPlan small = feed_plan(0.004);  // a 4 us launch (gemm:256, membw:1M)
  EXPECT_EQ(small.launches_per_span, 50);   // 200 us a span: two events per 50 launches
  EXPECT_EQ(small.spans_ahead, 25);         // 5 ms queued
  EXPECT_EQ(feed_plan(800.0).spans_ahead, 2);  // gemm:65536: one running, one queued
  EXPECT_EQ(feed_plan(1e-8).spans_ahead, kRingSpans - 1);  // at most 1e6 launches a span, within the ring
  EXPECT_EQ(feed_plan(0).launches_per_span, 1);  // no time: one launch a span
}

// ---- --energy ------------------------------------------------------------------------------

TEST(Energy, WindowCallsAndFigures) {
  using ms = std::chrono::duration<double, std::milli>;
  const std::chrono::milliseconds second(1000);
  EXPECT_EQ(telemetry::energy_calls_left(ms(0), 1000.0, 0, second), 1000);
  EXPECT_EQ(telemetry::energy_calls_left(ms(0), 3.0, 0, second), 333334);
  EXPECT_EQ(telemetry::energy_calls_left(ms(0), 2e6, 0, second), 1);
  EXPECT_EQ(telemetry::energy_calls_left(ms(0), 1e-3, 0, second), telemetry::kMaxEnergyCalls);
  EXPECT_EQ(telemetry::energy_calls_left(ms(0), 0, 0, second), telemetry::kMaxEnergyCalls);
  // A batch 4x slowed by a load sized the first round to a quarter: the clock asks for the rest,
  // at the time per call the round took.
  EXPECT_EQ(telemetry::energy_calls_left(ms(62.5), 250.0, 250, second), 3750);
  EXPECT_EQ(telemetry::energy_calls_left(ms(999.9), 250.0, 4000, second), 1);
  EXPECT_EQ(telemetry::energy_calls_left(ms(1000), 250.0, 4000, second), 0);  // long enough
  EXPECT_EQ(telemetry::energy_calls_left(ms(10), 1e-3, telemetry::kMaxEnergyCalls - 5, second), 5);
  EXPECT_EQ(telemetry::energy_calls_left(ms(10), 1.0, telemetry::kMaxEnergyCalls, second), 0);  // no more
  const auto f = telemetry::energy_figures(700.0, 1000, 1ull << 30);  // 700 J over 1000 collectives of 1 GiB
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->joules_per_collective, 0.7);
  EXPECT_DOUBLE_EQ(f->gb_per_joule, (1ull << 30) / 1e9 / 0.7);
  EXPECT_FALSE(telemetry::energy_figures(0.0, 1000, 8));    // the counter did not move: unknown, not 0
  EXPECT_FALSE(telemetry::energy_figures(-1.0, 1000, 8));
  EXPECT_FALSE(telemetry::energy_figures(5.0, 0, 8));
  EXPECT_NE(telemetry::energy_method(std::chrono::milliseconds(1000)).find("+-10 %"), std::string::npos);
  EXPECT_NE(telemetry::energy_method(std::chrono::milliseconds(10000)).find("+-1 %"), std::string::npos);
}

// The counter played back from recorded answers: found by UUID, read in order, and "not
// available" with NVML's reason where a GPU has no counter.
TEST(Energy, CounterFromRecordedAnswers) {
  const nlohmann::json doc = {
      {"format", telemetry::kAnswersFormat},
      {"driver", "580.65.06"},
      {"gpus", {{{"index", 0u}, {"name", "NVIDIA H200"}, {"uuid", "GPU-aaaa"}},
                {{"index", 1u}, {"name", "NVIDIA T4"}, {"uuid", "GPU-bbbb"}}}},
      {"answers", {{"0 energy_mj", {1000000, 1000000, 1700000}},
                   {"1 energy_mj", {{{"why_not", "nvmlDeviceGetTotalEnergyConsumption: not supported on this GPU"}}}}}}};
  auto src = telemetry::replay_answers(doc);
  EXPECT_EQ(telemetry::gpu_position(*src, "GPU-bbbb"), 1u);
  EXPECT_FALSE(telemetry::gpu_position(*src, "GPU-cccc"));
  EXPECT_FALSE(telemetry::gpu_position(*src, ""));
  telemetry::EnergyCounter h200(*src, 0), t4(*src, 1);
  const auto a = h200.read(), b = h200.read(), c = h200.read();
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(*b - *a, 0u);  // a window shorter than the counter's step reads nothing
  EXPECT_EQ(*c - *b, 700000u);
  EXPECT_FALSE(t4.read());
  EXPECT_EQ(t4.why_not(), "nvmlDeviceGetTotalEnergyConsumption: not supported on this GPU");
  EXPECT_EQ(telemetry::parse_query("energy_mj"), telemetry::Query::energy_mj);
}

// A GPU for which CUDA gives no PCI bus id is known by its UUID (gpu_identity), so the ranks
// sharing it read its counter once: the job's energy counts every GPU once. Four ranks on one host,
// 0 and 1 on GPU-aaaa (no bus id), 2 and 3 on the GPU at 19:00.0 (GPU-bbbb); the counters played
// back from recorded answers grow by 500 J and 300 J.
TEST(Energy, AGpuWithoutABusIdIsCountedOnce) {
  EXPECT_EQ(gpu_identity("", "GPU-aaaa"), "GPU-aaaa");
  EXPECT_EQ(gpu_identity("00000000:19:00.0", "GPU-bbbb"), "00000000:19:00.0");
  const nlohmann::json doc = {
      {"format", telemetry::kAnswersFormat},
      {"driver", "580.65.06"},
      {"gpus", {{{"index", 0u}, {"name", "NVIDIA H200"}, {"uuid", "GPU-aaaa"}},
                {{"index", 1u}, {"name", "NVIDIA H200"}, {"uuid", "GPU-bbbb"}}}},
      {"answers", {{"0 energy_mj", {1000000, 1500000}}, {"1 energy_mj", {2000000, 2300000}}}}};
  auto src = telemetry::replay_answers(doc);
  const std::vector<std::string> uuid = {"GPU-aaaa", "GPU-aaaa", "GPU-bbbb", "GPU-bbbb"};
  const std::vector<std::string> pci = {"", "", "00000000:19:00.0", "00000000:19:00.0"};
  auto layout_of = [&](int rank, const std::vector<std::string>& gpu_of) {
    RankLayout l = RankLayout::from_hosts(rank, std::vector<std::string>(4, "h"));
    l.gpu_of = gpu_of;
    return l;
  };
  std::vector<std::string> ids;
  for (std::size_t r = 0; r < 4; ++r) ids.push_back(gpu_identity(pci[r], uuid[r]));
  double joules = 0;
  std::vector<int> readers;
  for (int r = 0; r < 4; ++r) {
    if (!reads_its_gpu(layout_of(r, ids))) continue;
    readers.push_back(r);
    const auto at = telemetry::gpu_position(*src, uuid[static_cast<std::size_t>(r)]);
    ASSERT_TRUE(at);
    telemetry::EnergyCounter c(*src, *at);
    const auto begin = c.read(), end = c.read();
    ASSERT_TRUE(begin && end);
    joules += static_cast<double>(*end - *begin) / 1000.0;
  }
  EXPECT_EQ(readers, (std::vector<int>{0, 2}));
  EXPECT_DOUBLE_EQ(joules, 800.0);
  // An empty identity is no GPU's: ranks 0 and 1 would both read GPU-aaaa (1300 J for 800). The
  // harness never gathers one (gather_gpu_ids: a UUID where there is no bus id, else an error).
  int empty_readers = 0;
  for (int r = 0; r < 4; ++r) empty_readers += reads_its_gpu(layout_of(r, pci)) ? 1 : 0;
  EXPECT_EQ(empty_readers, 3);
}

// ---- the rows ------------------------------------------------------------------------------

TEST(TrainingColumns, RoundTripThroughCsvAndJsonAndEmptyWhereNotUsed) {
  RunRecord r = RecordBuilder().impl("nccl").transport("nccl").device("gpu");
  r.nccl_config = "maxCTAs=4;NCCL_ALGO=Ring";
  r.load = "gemm bf16 8192x8192x8192";
  r.load_unit = "TFLOPS";
  r.load_alone = 812.5;
  r.load_during = 640.25;
  r.load_alone_end = 790.0;
  r.health.energy_per_coll_j = 0.75;
  r.health.gb_per_joule = 1.5;
  r.health.energy_window_s = 1.0625;
  std::vector<std::string> header;
  for (const Column& c : record_columns()) header.push_back(c.csv_header);
  for (const RunRecord& back : {record_from_csv(header, to_csv_fields(r)), record_from_json(to_json(r))}) {
    EXPECT_EQ(back.nccl_config, r.nccl_config);
    EXPECT_EQ(back.load, r.load);
    EXPECT_EQ(back.load_unit, "TFLOPS");
    EXPECT_EQ(back.load_alone, 812.5);
    EXPECT_EQ(back.load_during, 640.25);
    EXPECT_EQ(back.load_alone_end, 790.0);
    EXPECT_EQ(back.health.energy_per_coll_j, 0.75);
    EXPECT_EQ(back.health.gb_per_joule, 1.5);
    EXPECT_EQ(back.health.energy_window_s, 1.0625);
  }
  const RunRecord plain;
  const Json j = to_json(plain);
  EXPECT_TRUE(j["load_during"].is_null() && j["load_alone_end"].is_null() && j["energy_per_coll_j"].is_null() &&
              j["gb_per_joule"].is_null() && j["energy_window_s"].is_null());
  EXPECT_EQ(j["nccl_config"], "");
  EXPECT_NE(std::find(header.begin(), header.end(), "energy[J/coll]"), header.end());
  EXPECT_NE(std::find(header.begin(), header.end(), "energy_efficiency[GB/J]"), header.end());
  EXPECT_NE(std::find(header.begin(), header.end(), "energy_window[s]"), header.end());
}

// Acceptance rules read the energy columns; rows without them are "not available", never a pass.
TEST(TrainingColumns, AcceptanceRulesOnEnergy) {
  const auto rules = parse_rules(R"(rules:
  - name: energy
    select: {collective: allreduce, min_size: 1G}
    require: {max_energy_j: 1.0, min_gb_per_joule: 1.2}
)", "energy.yaml");
  RunRecord row = RecordBuilder().impl("nccl").transport("nccl").device("gpu").bytes(1ull << 30);
  row.health.energy_per_coll_j = 0.8;
  row.health.gb_per_joule = (1ull << 30) / 1e9 / 0.8;
  EXPECT_TRUE(evaluate_rules(rules, {ResultSet{"run", {row}, {}, {}}}).passed);
  row.health.energy_per_coll_j = 1.25;
  row.health.gb_per_joule = (1ull << 30) / 1e9 / 1.25;
  const AcceptReport failed = evaluate_rules(rules, {ResultSet{"run", {row}, {}, {}}});
  EXPECT_FALSE(failed.passed);
  EXPECT_NE(failed.text().find("max_energy_j 1 J"), std::string::npos) << failed.text();
  row.health = {};
  const AcceptReport unknown = evaluate_rules(rules, {ResultSet{"run", {row}, {}, {}}});
  EXPECT_NE(unknown.text().find("not available"), std::string::npos) << unknown.text();
}

// ---- the options ---------------------------------------------------------------------------

Command parse_training(std::vector<std::string> args) {
  args.insert(args.begin(), "ccbench");
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

TEST(TrainingOptions, ParsedAndRefusedWithTheReason) {
  const RunOptions o = std::get<RunOptions>(
      parse_training({"--overlap", "membw:512M", "--nccl-config", "maxCTAs=4,8", "--nccl-config", "NCCL_PROTO=Simple", "--energy", "5"}));
  EXPECT_EQ(o.overlap.kind, LoadKind::membw);
  EXPECT_EQ(o.overlap.size, 512ull << 20);
  ASSERT_EQ(o.nccl_configs.size(), 2u);
  EXPECT_EQ(o.nccl_configs[1].label(), "maxCTAs=8;NCCL_PROTO=Simple");
  EXPECT_EQ(o.telemetry.energy_window, std::chrono::milliseconds(5000));
  EXPECT_EQ(std::get<RunOptions>(parse_training({"--energy", "on"})).telemetry.energy_window, std::chrono::milliseconds(1000));
  EXPECT_EQ(std::get<RunOptions>(parse_training({})).telemetry.energy_window, std::chrono::milliseconds(0));
  EXPECT_EQ(std::get<RunOptions>(parse_training({})).overlap.kind, LoadKind::none);
  expect_usage([] { parse_training({"--device", "cpu", "--overlap", "gemm"}); }, "not with --device cpu");
  expect_usage([] { parse_training({"--groups", "pairs", "--overlap", "gemm"}); }, "not with --groups pairs");
  expect_usage([] { parse_training({"--energy", "0.5"}); }, "from 1 to 600");
  expect_usage([] { parse_training({"--energy", "yes"}); }, "valid: off, on");
  expect_usage([] { parse_training({"--nccl-config", "maxCTAs=x"}); }, "--nccl-config maxCTAs=x");
  expect_usage([] { parse_training({"--nccl-config", "maxCTAs=4", "--impl", "ring,tree"}); },
               "--impl ring,tree names no NCCL implementation");
  EXPECT_EQ(std::get<RunOptions>(parse_training({"--nccl-config", "maxCTAs=4", "--impl", "ring,nccl-tree"})).nccl_configs.size(),
            1u);
  expect_usage([] { parse_training({"--overlap", "gemm:100"}); }, "a multiple of 64");
  expect_usage([] { parse_training({"--overlap", "fast"}); }, "valid: gemm[:N] (N from 256 to 65536");
  // The room, given before or after the load, and its default.
  EXPECT_EQ(o.overlap.room_sms, kDefaultRoomSms);
  EXPECT_EQ(std::get<RunOptions>(parse_training({"--overlap-room", "0", "--overlap", "gemm"})).overlap.room_sms, 0);
  EXPECT_EQ(std::get<RunOptions>(parse_training({"--overlap", "gemm", "--overlap-room", "32"})).overlap.room_sms, 32);
  expect_usage([] { parse_training({"--overlap", "gemm", "--overlap-room", "2000"}); }, "0 to 1024");
  expect_usage([] { parse_training({"--overlap", "gemm", "--overlap-room", "-1"}); }, "--overlap-room");
  const auto notes = std::get<RunOptions>(parse_training({"--overlap-room", "8"})).notes;
  EXPECT_NE(std::find(notes.begin(), notes.end(), "--overlap-room 8 changes nothing without --overlap"), notes.end());
}

}  // namespace
}  // namespace ccbench
