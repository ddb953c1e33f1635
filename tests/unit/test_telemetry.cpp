// telemetry/ and the health parts of results/: throttle-reason decoding, the health columns, the
// checks, counter deltas, NIC counters from a fake sysfs tree, NVML absent, recorded NVML answers
// played back, and the sampler end to end on one process (the gather is the identity).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/error.h"
#include "results/health_checks.h"
#include "results/record.h"
#include "telemetry/counters.h"
#include "telemetry/nvml_source.h"
#include "telemetry/options.h"
#include "telemetry/recorded_source.h"
#include "telemetry/sampler.h"

namespace ccbench::telemetry {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kFixture = std::string(CCBENCH_GOLDEN_DIR) + "/../fixtures/nvml-h200x2-healthy.json";

json fixture() {
  std::ifstream in(kFixture);
  return json::parse(in);
}

// A temporary folder, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "ccbench-telemetry-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A sysfs tree as /sys/class/infiniband has it: <dev>/ports/<port>/counters/<name>.
void fake_port(const fs::path& dir, const std::string& dev, int port, std::uint64_t symbol_errors) {
  const fs::path c = dir / dev / "ports" / std::to_string(port) / "counters";
  write(c / "symbol_error", std::to_string(symbol_errors) + "\n");
  write(c / "link_downed", "0\n");
  write(c / "port_rcv_errors", "0\n");
  write(c / "port_xmit_data", "1000\n");
  write(c / "port_rcv_data", "2000\n");
}

// Passes every query to the recorded answers and counts the temperature reads, so that a test
// can wait for the sampling thread instead of guessing how long a loaded machine needs.
class CountingSource final : public GpuSource {
 public:
  explicit CountingSource(std::unique_ptr<GpuSource> inner) : inner_(std::move(inner)) {}
  std::string unavailable() const override { return inner_->unavailable(); }
  std::string driver_version() const override { return inner_->driver_version(); }
  std::vector<GpuInfo> gpus() const override { return inner_->gpus(); }
  Answer read(unsigned gpu, Query q, unsigned link) override {
    if (q == Query::temperature_c) ++reads_;
    return inner_->read(gpu, q, link);
  }
  // Waits (at most 10 s) until `more` further temperature reads happened.
  void wait_for_reads(int more) {
    const int target = reads_ + more;
    for (int i = 0; i < 1000 && reads_ < target; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

 private:
  std::unique_ptr<GpuSource> inner_;
  std::atomic<int> reads_{0};
};

Gather identity_gather() {
  return [](const std::string& s) { return std::vector<std::string>{s}; };
}

// ---- throttle reasons -------------------------------------------------------------------

TEST(Throttle, NamesFollowNvmlBitsAndRoundTrip) {
  EXPECT_EQ(throttle_names(0), "none");
  EXPECT_EQ(throttle_names(kThrottleSwPowerCap | kThrottleHwThermal), "sw_power_cap+hw_thermal_slowdown");
  EXPECT_EQ(throttle_names(0x200 | kThrottleGpuIdle), "gpu_idle+0x200");
  for (std::uint64_t m : {0ull, 0x1ull, 0x4ull, 0x48ull, 0x1ffull, 0x400ull | 0x8ull})
    EXPECT_EQ(parse_throttle_names(throttle_names(m)), m) << m;
  EXPECT_THROW(parse_throttle_names("too_hot"), Error);
}

TEST(Throttle, IdleAndClockSettingsAreBenign) {
  EXPECT_EQ(health_relevant_throttle(kThrottleGpuIdle | kThrottleApplicationsClocks | kThrottleDisplayClocks), 0u);
  EXPECT_EQ(health_relevant_throttle(kThrottleGpuIdle | kThrottleSyncBoost), kThrottleSyncBoost);
  EXPECT_EQ(health_relevant_throttle(0x200), 0x200u);  // an unknown reason is not assumed benign
}

// ---- checks -------------------------------------------------------------------------------

TEST(HealthChecks, NothingReadIsNotAvailableNeverPass) {
  for (const HealthCheck& c : check_health(RowHealth{}, 85)) EXPECT_EQ(c.state, HealthState::not_available) << c.name;
}

TEST(HealthChecks, PassAndFail) {
  RowHealth h;
  h.temp_max_c = 84.0;
  h.throttle = kThrottleSyncBoost;
  h.nvlink_errors = 0;
  h.nic_errors = 0;
  auto c = check_health(h, 85);
  EXPECT_EQ(c[0].state, HealthState::pass);
  EXPECT_EQ(c[1].state, HealthState::pass);  // sync boost is not thermal or power
  EXPECT_NE(c[1].detail.find("sync_boost"), std::string::npos);
  EXPECT_EQ(c[2].state, HealthState::pass);

  h.temp_max_c = 85.0;  // reaching the limit fails
  h.throttle = kThrottleHwSlowdown;
  h.pcie_replays = 3;
  c = check_health(h, 85);
  EXPECT_EQ(c[0].state, HealthState::fail);
  EXPECT_EQ(c[0].detail, "pcie_replays grew by 3");
  EXPECT_EQ(c[1].state, HealthState::fail);
  EXPECT_EQ(c[1].detail, "thermal or power throttling: hw_slowdown");
  EXPECT_EQ(c[2].state, HealthState::fail);
  RowHealth capped;
  capped.throttle = kThrottleSwPowerCap;
  EXPECT_EQ(check_no_thermal_or_power_throttling(capped).state, HealthState::fail);
}

// ---- the record's columns ---------------------------------------------------------------------

TEST(HealthColumns, CsvAndJsonRoundTripWithEmptyForNotAvailable) {
  RunRecord r;
  r.collective = "allreduce";
  r.health.temp_max_c = 71.0;
  r.health.power_mean_w = 412.5;
  r.health.throttle = kThrottleSwPowerCap;
  r.health.nvlink_errors = 2;  // the others stay not available
  std::vector<std::string> header;
  for (const Column& c : record_columns()) header.push_back(c.csv_header);
  const auto fields = to_csv_fields(r);
  auto cell = [&](const std::string& h) { return fields[std::find(header.begin(), header.end(), h) - header.begin()]; };
  EXPECT_EQ(cell("gpu_temp_max[C]"), "71");
  EXPECT_EQ(cell("gpu_power_mean[W]"), "412.5");
  EXPECT_EQ(cell("gpu_throttle"), "sw_power_cap");
  EXPECT_EQ(cell("nvlink_errors"), "2");
  EXPECT_EQ(cell("pcie_replays"), "");
  EXPECT_EQ(cell("gpu_sm_clock_min[MHz]"), "");
  EXPECT_EQ(record_from_csv(header, fields).health, r.health);

  const Json j = to_json(r);
  EXPECT_TRUE(j["pcie_replays"].is_null());
  EXPECT_EQ(j["gpu_throttle"], "sw_power_cap");
  EXPECT_EQ(record_from_json(j).health, r.health);

  auto bad = fields;
  bad[std::find(header.begin(), header.end(), "nvlink_errors") - header.begin()] = "-1";
  EXPECT_THROW(record_from_csv(header, bad), Error);
}

// ---- counter deltas ---------------------------------------------------------------------------

TEST(Counters, DeltasSayWhyWhenThereIsNone) {
  const Snapshot before = {{"GPU 0 NVLink 1", "replay errors", CounterKind::nvlink, 5, {}},
                           {"GPU 0", "PCIe replays", CounterKind::pcie_replay, std::nullopt, "not supported on this GPU"},
                           {"NIC mlx5_0 port 1", "symbol_error", CounterKind::nic_error, 10, {}},
                           {"NIC mlx5_0 port 1", "port_xmit_data", CounterKind::nic_traffic, 100, {}}};
  Snapshot after = before;
  after[0].value = 8;
  after[2].value = 3;  // went backwards: a reset
  after[3].value = 900;
  after.push_back({"GPU 0", "critical XID events", CounterKind::xid, 1, {}});
  const auto d = counter_deltas(before, after);
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].growth, 3u);
  EXPECT_EQ(d[1].why_not, "not supported on this GPU");
  EXPECT_FALSE(d[2].growth);
  EXPECT_EQ(d[2].why_not, "went backwards from 10 to 3 (reset or wrapped)");
  EXPECT_EQ(d[3].growth, 800u);
  EXPECT_EQ(d[4].why_not, "not read before");

  RowHealth h;
  add_deltas(h, d);
  EXPECT_EQ(h.nvlink_errors, 3u);
  EXPECT_FALSE(h.pcie_replays);  // no counter of its kind had a delta: not available, not 0
  EXPECT_FALSE(h.nic_errors);    // traffic is not an error
  EXPECT_FALSE(h.xid_events);
}

// ---- NIC counters from sysfs ------------------------------------------------------------------

TEST(NicCounters, FakeSysfsTree) {
  TempDir dir;
  fake_port(dir.path(), "mlx5_1", 1, 7);
  fake_port(dir.path(), "mlx5_0", 1, 4);
  write(dir.path() / "mlx5_0/ports/1/counters/link_downed", "garbage\n");
  auto none = replay_answers(json{{"format", kAnswersFormat}, {"unavailable", "no GPU here"}});
  const CounterPlan plan = plan_counters(*none, dir.path().string());
  EXPECT_EQ(plan.nic_ports, (std::vector<std::string>{"mlx5_0/1", "mlx5_1/1"}));
  const Snapshot s = read_counters(*none, plan);
  ASSERT_EQ(s.size(), 10u);
  EXPECT_EQ(s[0].where, "NIC mlx5_0 port 1");
  EXPECT_EQ(s[0].what, "symbol_error");
  EXPECT_EQ(s[0].value, 4u);
  EXPECT_FALSE(s[1].value);
  EXPECT_NE(s[1].why_not.find("holds 'garbage', not a number"), std::string::npos);
  EXPECT_EQ(s[5].value, 7u);

  const CounterPlan missing = plan_counters(*none, (dir.path() / "absent").string());
  EXPECT_NE(missing.nic_unavailable.find("does not exist"), std::string::npos);
}

// ---- NVML absent, recorded answers ------------------------------------------------------------

TEST(Nvml, AbsentLibraryOrNotNvmlIsNotAvailableWithTheReason) {
  auto absent = open_nvml("libnvidia-ml-absent.so.1");
  EXPECT_EQ(absent->unavailable(), "libnvidia-ml-absent.so.1 not found (no NVIDIA driver)");
  EXPECT_TRUE(absent->gpus().empty());
  EXPECT_EQ(absent->read(0, Query::temperature_c).why_not, absent->unavailable());
  auto not_nvml = open_nvml("libm.so.6");  // a library that exists but has no nvmlInit_v2
  EXPECT_EQ(not_nvml->unavailable(), "libm.so.6 has no nvmlInit_v2 (not NVML, or a driver too old)");
}

TEST(RecordedAnswers, PlayedBackInOrderThenTheLastRepeats) {
  auto src = replay_answers(fixture());
  ASSERT_EQ(src->gpus().size(), 2u);
  EXPECT_EQ(src->gpus()[1].name, "NVIDIA H200");
  EXPECT_EQ(src->driver_version(), "580.65.06");
  std::vector<std::uint64_t> temps;
  for (int i = 0; i < 6; ++i) temps.push_back(*src->read(0, Query::temperature_c).value);
  EXPECT_EQ(temps, (std::vector<std::uint64_t>{36, 41, 45, 47, 47, 47}));
  EXPECT_EQ(src->read(1, Query::nvlink_active, 17).value, 1u);
  EXPECT_EQ(src->read(0, Query::nvlink_active, 18).why_not, "'0 nvlink_active 18' is not in the recorded answers");
}

TEST(RecordedAnswers, BadDocumentsAreUsageErrors) {
  EXPECT_THROW(replay_answers(json{{"format", "something else"}}), Error);
  json j = fixture();
  j["answers"]["0 power_mw"] = json::array({-5});
  EXPECT_THROW(replay_answers(j), Error);
  EXPECT_THROW(replay_answers_file("/nonexistent/answers.json"), Error);
}

TEST(RecordedAnswers, RecordingWritesWhatPlaysBack) {
  TempDir dir;
  const std::string path = (dir.path() / "rec.json").string();
  json source = fixture();
  source["answers"]["1 pcie_replays"] = json::array({json{{"why_not", "not supported on this GPU"}}});
  {
    RecordingSource rec(replay_answers(source), path);
    for (int i = 0; i < 3; ++i) rec.read(0, Query::temperature_c);
    rec.read(1, Query::pcie_replays);
    rec.read(0, Query::nvlink_replay, 4);
  }
  auto back = replay_answers_file(path);
  EXPECT_EQ(back->gpus().size(), 2u);
  EXPECT_EQ(back->read(0, Query::temperature_c).value, 36u);
  EXPECT_EQ(back->read(0, Query::temperature_c).value, 41u);
  EXPECT_EQ(back->read(0, Query::temperature_c).value, 45u);
  EXPECT_EQ(back->read(1, Query::pcie_replays).why_not, "not supported on this GPU");
  EXPECT_EQ(back->read(0, Query::nvlink_replay, 4).value, 0u);
  EXPECT_FALSE(back->read(0, Query::power_mw).value);  // never asked, so never recorded
}

// ---- the sampler on one process ---------------------------------------------------------------

Options fast_options() {
  Options o;
  o.enabled = true;  // telemetry is off unless asked for (--telemetry on)
  o.interval = std::chrono::milliseconds(10);
  return o;
}

TEST(Sampler, NoGpuNoNicIsNotAvailableWithReasons) {
  TempDir dir;
  Sources s{open_nvml("libnvidia-ml-absent.so.1"), (dir.path() / "no-infiniband").string()};
  Sampler sampler(fast_options(), {true, true, "node-a"}, std::move(s), identity_gather(), "");
  const Json& node = sampler.context()["nodes"][0];
  EXPECT_EQ(node["host"], "node-a");
  EXPECT_EQ(node["gpus"]["available"], false);
  EXPECT_EQ(node["gpus"]["reason"], "libnvidia-ml-absent.so.1 not found (no NVIDIA driver)");
  EXPECT_EQ(node["nics"]["available"], false);
  sampler.begin_row();
  EXPECT_EQ(sampler.end_row("row 1"), RowHealth{});
  testing::internal::CaptureStdout();
  sampler.finish();
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("# health check temperature: not available"), std::string::npos) << out;
  EXPECT_FALSE(sampler.fails_health());
}

TEST(Sampler, HealthyNodeFiguresSeriesAndNoWarnings) {
  TempDir dir;
  fake_port(dir.path() / "ib", "mlx5_0", 1, 0);
  const std::string series = (dir.path() / "telemetry.jsonl").string();
  Options opts = fast_options();
  opts.fail_on_health = true;
  auto counting = std::make_unique<CountingSource>(replay_answers(fixture()));
  CountingSource* source = counting.get();
  Sampler sampler(opts, {true, true, "node-a"}, Sources{std::move(counting), (dir.path() / "ib").string()},
                  identity_gather(), series);
  EXPECT_EQ(sampler.context()["series_file"], "telemetry.jsonl");
  EXPECT_EQ(sampler.context()["nodes"][0]["gpus"]["devices"][0]["nvlinks"].size(), 18u);
  EXPECT_EQ(sampler.context()["nodes"][0]["nics"]["ports"], Json::array({"mlx5_0/1"}));
  sampler.begin_row();
  source->wait_for_reads(3 * 2);  // three samples of both GPUs in the row
  testing::internal::CaptureStderr();
  const RowHealth h = sampler.end_row("allreduce/ring float sum 64 MiB out-of-place");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");  // healthy: nothing to warn about
  ASSERT_TRUE(h.temp_max_c && h.power_mean_w && h.sm_clock_min_mhz && h.throttle);
  EXPECT_GE(*h.temp_max_c, 41.0);
  EXPECT_LE(*h.temp_max_c, 48.0);
  EXPECT_GT(*h.power_mean_w, 118.0);  // loaded samples in the window
  EXPECT_LE(*h.power_mean_w, 455.0);
  EXPECT_EQ(*h.sm_clock_min_mhz, 1980.0);  // the idle 345 MHz sample came before the row
  EXPECT_EQ(*h.throttle, 0u);
  EXPECT_EQ(h.nvlink_errors, 0u);
  EXPECT_EQ(h.ecc_uncorrected, 0u);
  EXPECT_EQ(h.nic_errors, 0u);
  testing::internal::CaptureStdout();
  sampler.finish();
  testing::internal::GetCapturedStdout();
  EXPECT_FALSE(sampler.fails_health());

  std::ifstream in(series);
  std::string line;
  int samples = 0, rows = 0, summaries = 0;
  while (std::getline(in, line)) {
    const json j = json::parse(line);
    if (j["type"] == "sample") {
      ++samples;
      EXPECT_EQ(j["power_limit_w"], 700.0);
    }
    rows += j["type"] == "row";
    if (j["type"] == "summary") {
      ++summaries;
      for (const json& c : j["checks"]) EXPECT_EQ(c["state"], "pass") << c.dump();
    }
  }
  EXPECT_GE(samples, 2 * 4);  // the first sample and the ones in the row, for both GPUs
  EXPECT_EQ(rows, 1);
  EXPECT_EQ(summaries, 1);
}

TEST(Sampler, WarnsNamingHostGpuAndLinkAndFailsHealth) {
  TempDir dir;
  fake_port(dir.path() / "ib", "mlx5_0", 1, 0);
  json answers = fixture();
  answers["answers"]["1 temperature_c"] = json::array({80, 91});
  answers["answers"]["1 throttle_reasons"] = json::array({0, kThrottleHwThermal | kThrottleGpuIdle});
  // Read at start, before the row, after it: growth of 2 during the row.
  answers["answers"]["0 nvlink_replay 3"] = json::array({0, 0, 2});
  Options opts = fast_options();
  opts.fail_on_health = true;
  auto counting = std::make_unique<CountingSource>(replay_answers(answers));
  CountingSource* source = counting.get();
  Sampler sampler(opts, {true, true, "node-a"}, Sources{std::move(counting), (dir.path() / "ib").string()},
                  identity_gather(), "");
  sampler.begin_row();
  source->wait_for_reads(2 * 2);
  fake_port(dir.path() / "ib", "mlx5_0", 1, 5);  // symbol errors during the row
  testing::internal::CaptureStderr();
  const RowHealth h = sampler.end_row("allgather/nccl float 1 GiB in-place");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("warning: host node-a GPU 1 (NVIDIA H200): clocks throttled (hw_thermal_slowdown) during "
                     "allgather/nccl float 1 GiB in-place"), std::string::npos) << err;
  EXPECT_NE(err.find("warning: host node-a GPU 1 (NVIDIA H200): temperature 91 C reached the limit of 85 C"),
            std::string::npos) << err;
  EXPECT_NE(err.find("warning: host node-a GPU 0 (NVIDIA H200) NVLink 3: replay errors grew by 2 during"),
            std::string::npos) << err;
  EXPECT_NE(err.find("warning: host node-a NIC mlx5_0 port 1: symbol_error grew by 5 during"), std::string::npos) << err;
  EXPECT_EQ(h.temp_max_c, 91.0);
  EXPECT_EQ(h.throttle, kThrottleHwThermal);
  EXPECT_EQ(h.nvlink_errors, 2u);
  EXPECT_EQ(h.nic_errors, 5u);

  // A second row: the same conditions are not warned about again; the counters did not grow.
  sampler.begin_row();
  testing::internal::CaptureStderr();
  const RowHealth h2 = sampler.end_row("row 2");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(h2.nvlink_errors, 0u);
  EXPECT_EQ(h2.temp_max_c, 91.0);

  testing::internal::CaptureStdout();
  sampler.finish();
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("# health check error counters: fail (nvlink_errors grew by 2, nic_errors grew by 5)"),
            std::string::npos) << out;
  EXPECT_TRUE(sampler.fails_health());
  EXPECT_EQ(sampler.run_health().nvlink_errors, 2u);
}

TEST(Sampler, OffTakesNoPartAndRecordsNothing) {
  Options off;
  off.enabled = false;
  int gathers = 0;
  Sampler sampler(off, {true, true, "node-a"}, Sources{}, [&](const std::string& s) {
    ++gathers;
    return std::vector<std::string>{s};
  }, "");
  EXPECT_EQ(sampler.context(), Json({{"enabled", false}}));
  sampler.begin_row();
  EXPECT_EQ(sampler.end_row("row"), RowHealth{});
  sampler.finish();
  EXPECT_EQ(gathers, 0);
  EXPECT_FALSE(sampler.fails_health());
}

TEST(Sampler, OnlyTheFirstRankOfEachHostSamples) {
  const std::vector<std::string> hosts = {"a", "a", "b", "a", "b"};
  std::vector<bool> samples;
  for (int r = 0; r < 5; ++r) samples.push_back(samples_its_host(r, hosts));
  EXPECT_EQ(samples, (std::vector<bool>{true, false, true, false, false}));
}

// ---- options ----------------------------------------------------------------------------------

TEST(TelemetryOptions, ValidatedWithClearMessages) {
  RawOptions raw;
  EXPECT_FALSE(finish_options(raw).enabled) << "telemetry is off by default";
  EXPECT_EQ(finish_options(raw).interval, std::chrono::milliseconds(100));
  raw.interval = "5";
  try {
    finish_options(raw);
    FAIL() << "an interval of 5 ms was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("from 10 to 60000"), std::string::npos) << e.what();
  }
  raw = RawOptions{};
  raw.telemetry = "maybe";
  EXPECT_THROW(finish_options(raw), Error);
  raw = RawOptions{};
  raw.temp_limit = "hot";
  EXPECT_THROW(finish_options(raw), Error);
  raw = RawOptions{};
  raw.telemetry = "off";
  raw.fail_on_health = true;
  EXPECT_THROW(finish_options(raw), Error);
}

}  // namespace
}  // namespace ccbench::telemetry
