// telemetry/ and the health parts of results/: throttle-reason decoding, the health columns, the
// checks, counter deltas, NIC counters from a fake sysfs tree, NVML absent, recorded NVML answers
// played back, and the sampler end to end on one process (the gather is the identity).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "core/error.h"
#include "results/health_checks.h"
#include "results/record.h"
#include "telemetry/counters.h"
#include "telemetry/nvml_source.h"
#include "telemetry/options.h"
#include "telemetry/recorded_source.h"
#include "telemetry/sampler.h"
#include "tests/unit/cli_parse.h"
#include "tests/unit/usage_error.h"
#include "tests/support/record_builder.h"

namespace ccbench::telemetry {
namespace {

using test::RecordBuilder;

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

// Whole at once (a rename), as the kernel's counter files: the counter thread may read it meanwhile.
void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  const fs::path tmp = p.string() + ".new";
  std::ofstream(tmp) << text;
  fs::rename(tmp, p);
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

bool is_counter_query(Query q) {
  return q != Query::nvlink_active && (is_nvlink_query(q) || q == Query::pcie_replays || q == Query::ecc_corrected ||
                                       q == Query::ecc_uncorrected || q == Query::xid_events);
}

// Passes every query to the recorded answers and counts reads: of the temperature (one per
// sample), of GPU 0's PCIe replays (one per counter read), and of any counter on the thread that
// made the source (the main thread), so that a test can wait for the sampler's threads instead
// of guessing how long a loaded machine needs, and check which thread read what.
class CountingSource final : public GpuSource {
 public:
  explicit CountingSource(std::unique_ptr<GpuSource> inner) : inner_(std::move(inner)) {}
  std::string unavailable() const override { return inner_->unavailable(); }
  std::string driver_version() const override { return inner_->driver_version(); }
  std::vector<GpuInfo> gpus() const override { return inner_->gpus(); }
  Answer read(unsigned gpu, Query q, unsigned link) override {
    if (is_counter_query(q) && std::this_thread::get_id() == main_) ++main_thread_counter_reads_;
    Answer a = inner_->read(gpu, q, link);
    if (q == Query::temperature_c) ++reads_;
    if (q == Query::pcie_replays && gpu == 0) ++counter_reads_;
    return a;
  }
  // Waits (at most 10 s) until `more` further temperature reads happened.
  void wait_for_reads(int more) { wait_for(reads_, more); }
  // Waits (at most 10 s) until `more` further full counter reads ended.
  void wait_for_counter_reads(int more) { wait_for(counter_reads_, more); }
  int main_thread_counter_reads() const { return main_thread_counter_reads_; }

 private:
  static void wait_for(const std::atomic<int>& count, int more) {
    const int target = count + more;
    for (int i = 0; i < 1000 && count < target; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::unique_ptr<GpuSource> inner_;
  const std::thread::id main_ = std::this_thread::get_id();
  std::atomic<int> reads_{0}, counter_reads_{0}, main_thread_counter_reads_{0};
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
  RunRecord r = RecordBuilder();
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
  const Snapshot before = {{"GPU 0 NVLink 1", "replay errors", CounterKind::nvlink, 5, {}, "GPU 0"},
                           {"GPU 0", "PCIe replays", CounterKind::pcie_replay, std::nullopt, "not supported on this GPU", "GPU 0"},
                           {"NIC mlx5_0 port 1", "symbol_error", CounterKind::nic_error, 10, {}, "NIC mlx5_0 port 1"},
                           {"NIC mlx5_0 port 1", "port_xmit_data", CounterKind::nic_traffic, 100, {}, "NIC mlx5_0 port 1"}};
  Snapshot after = before;
  after[0].value = 8;
  after[2].value = 3;  // went backwards: a reset
  after[3].value = 900;
  after.push_back({"GPU 0", "critical XID events", CounterKind::xid, 1, {}, "GPU 0"});
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

TEST(RecordedAnswers, LatencyIsRecordedAndPlayedBack) {
  TempDir dir;
  const std::string path = (dir.path() / "rec.json").string();
  json slow = fixture();
  slow["latency_us"] = {{"0 pcie_replays", 30000}};
  {
    RecordingSource rec(replay_answers(slow), path);
    rec.read(0, Query::pcie_replays);
    rec.read(0, Query::temperature_c);
  }
  const json written = json::parse(std::ifstream(path));
  EXPECT_GE(written["latency_us"]["0 pcie_replays"].get<std::uint64_t>(), 30000u);  // it took what the replay took
  EXPECT_LT(written["latency_us"]["0 temperature_c"].get<std::uint64_t>(), 30000u);
  auto back = replay_answers_file(path);
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_EQ(back->read(0, Query::pcie_replays).value, 0u);
  EXPECT_GE(std::chrono::steady_clock::now() - begin, std::chrono::milliseconds(30));

  slow["latency_us"] = {{"0 pcie_replays", -1}};
  EXPECT_THROW(replay_answers(slow), Error);
  slow["latency_us"] = json::array({1});
  EXPECT_THROW(replay_answers(slow), Error);
}

// ---- the sampler on one process ---------------------------------------------------------------

Options fast_options() {
  Options o;
  o.enabled = true;
  o.interval = std::chrono::milliseconds(10);
  o.counter_interval = std::chrono::milliseconds(10);
  return o;
}

// A sampler of one node, "node-a", on `answers`, with the fake NIC port under `dir`/ib.
struct OneNode {
  OneNode(const TempDir& dir, const json& answers, const Options& opts, const std::string& series = "") {
    fake_port(dir.path() / "ib", "mlx5_0", 1, 0);
    auto counting = std::make_unique<CountingSource>(replay_answers(answers));
    source = counting.get();
    sampler = std::make_unique<Sampler>(opts, Role{true, true, "node-a"},
                                        Sources{std::move(counting), (dir.path() / "ib").string()}, identity_gather(), series);
  }
  // One row in which the sampling thread took `samples` samples of every GPU and at least one
  // full counter read began and ended; `during` runs after the row began. Returns the row's
  // figures; the warnings go to `warnings`.
  RowHealth row(const std::string& label, int samples, const std::function<void()>& during, std::string& warnings) {
    sampler->begin_row();
    if (during) during();
    source->wait_for_reads(samples * 2);
    source->wait_for_counter_reads(2);  // the second one begins after the first has ended
    testing::internal::CaptureStderr();
    const RowHealth h = sampler->end_row(label);
    warnings = testing::internal::GetCapturedStderr();
    return h;
  }
  // finish(); returns stdout, the warnings go to `warnings`.
  std::string finish(std::string& warnings) {
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    sampler->finish();
    warnings = testing::internal::GetCapturedStderr();
    return testing::internal::GetCapturedStdout();
  }
  CountingSource* source = nullptr;
  std::unique_ptr<Sampler> sampler;
};

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Sampler, NoGpuNoNicIsNotAvailableWithReasons) {
  TempDir dir;
  Sources s{open_nvml("libnvidia-ml-absent.so.1"), (dir.path() / "no-infiniband").string()};
  Sampler sampler(fast_options(), {true, true, "node-a"}, std::move(s), identity_gather(),
                  (dir.path() / "telemetry.jsonl").string());
  const Json& node = sampler.context()["nodes"][0];
  EXPECT_EQ(node["host"], "node-a");
  EXPECT_EQ(node["gpus"]["available"], false);
  EXPECT_EQ(node["gpus"]["reason"], "libnvidia-ml-absent.so.1 not found (no NVIDIA driver)");
  EXPECT_EQ(node["nics"]["available"], false);
  EXPECT_FALSE(sampler.writes_series()) << "nothing to sample: no series file";
  EXPECT_TRUE(sampler.context()["series_file"].is_null());
  EXPECT_FALSE(fs::exists(dir.path() / "telemetry.jsonl"));
  sampler.begin_row();
  EXPECT_EQ(sampler.end_row("row 1"), RowHealth{});
  testing::internal::CaptureStdout();
  sampler.finish();
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, fmt::format("# health: not available (host node-a: libnvidia-ml-absent.so.1 not found (no NVIDIA "
                             "driver); {}/no-infiniband does not exist (no RDMA NIC driver loaded))\n",
                             dir.path().string()));
  EXPECT_FALSE(sampler.fails_health());
}

TEST(Sampler, HealthyNodeFiguresSeriesAndNoWarnings) {
  TempDir dir;
  const std::string series = (dir.path() / "telemetry.jsonl").string();
  Options opts = fast_options();
  opts.fail_on_health = true;
  OneNode n(dir, fixture(), opts, series);
  Sampler& sampler = *n.sampler;
  EXPECT_EQ(sampler.context()["series_file"], "telemetry.jsonl");
  EXPECT_EQ(sampler.context()["counter_interval_ms"], 10);
  EXPECT_EQ(sampler.context()["nodes"][0]["gpus"]["devices"][0]["nvlinks"].size(), 18u);
  EXPECT_EQ(sampler.context()["nodes"][0]["nics"]["ports"], Json::array({"mlx5_0/1"}));
  std::string warnings;
  const RowHealth h = n.row("allreduce/ring float sum 64 MiB out-of-place", 3, nullptr, warnings);
  EXPECT_EQ(warnings, "");  // healthy: nothing to warn about
  ASSERT_TRUE(h.temp_max_c && h.power_mean_w && h.sm_clock_min_mhz && h.throttle);
  EXPECT_GE(*h.temp_max_c, 41.0);
  EXPECT_LE(*h.temp_max_c, 48.0);
  EXPECT_GT(*h.power_mean_w, 118.0);  // loaded samples in the window
  EXPECT_LE(*h.power_mean_w, 455.0);
  EXPECT_EQ(*h.sm_clock_min_mhz, 1980.0);  // the idle 345 MHz sample came before the row
  EXPECT_EQ(*h.throttle, 0u);
  EXPECT_EQ(h.nvlink_errors, 0u);  // a counter read ended during the row: 0, not "not available"
  EXPECT_EQ(h.ecc_uncorrected, 0u);
  EXPECT_EQ(h.nic_errors, 0u);
  const std::string out = n.finish(warnings);
  EXPECT_EQ(warnings, "");
  EXPECT_NE(out.find("# health check error counters: pass"), std::string::npos) << out;
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
    if (j["type"] == "row") {
      ++rows;
      ASSERT_EQ(j["counter_window_s"].size(), 2u) << line;
      EXPECT_LT(j["counter_window_s"][0], j["counter_window_s"][1]) << line;
    }
    EXPECT_NE(j["type"], "counters") << "nothing grew: " << line;
    if (j["type"] == "summary") {
      ++summaries;
      for (const json& c : j["checks"]) EXPECT_EQ(c["state"], "pass") << c.dump();
    }
  }
  EXPECT_GE(samples, 2 * 4);  // the first sample and the ones in the row, for both GPUs
  EXPECT_EQ(rows, 1);
  EXPECT_EQ(summaries, 1);
}

TEST(Sampler, ARowInWhichNoCounterReadEndedHasNoCounterFigures) {
  TempDir dir;
  Options opts = fast_options();
  opts.counter_interval = std::chrono::milliseconds(60000);  // only the reads at start and end
  OneNode n(dir, fixture(), opts);
  n.sampler->begin_row();
  const RowHealth h = n.sampler->end_row("row");
  EXPECT_FALSE(h.nvlink_errors);  // not read during the row: not available, not 0
  EXPECT_FALSE(h.nic_errors);
  EXPECT_TRUE(h.temp_max_c);  // the samples still stand for it
  std::string warnings;
  n.finish(warnings);
  EXPECT_EQ(n.sampler->run_health().nvlink_errors, 0u);  // the run: from the first read to the last
}

TEST(Sampler, WarnsNamingHostGpuAndLinkOncePerRunAndFailsHealth) {
  TempDir dir;
  json answers = fixture();
  answers["answers"]["1 temperature_c"] = json::array({80, 91});
  answers["answers"]["1 throttle_reasons"] = json::array({0, kThrottleHwThermal | kThrottleGpuIdle});
  answers["answers"]["0 nvlink_replay 3"] = json::array({0, 2});  // 0 at start, 2 from the next read on
  Options opts = fast_options();
  opts.fail_on_health = true;
  OneNode n(dir, answers, opts);
  const fs::path ib = dir.path() / "ib";
  std::string err;
  const RowHealth h = n.row("allgather/nccl float 1 GiB in-place", 2, [&] { fake_port(ib, "mlx5_0", 1, 5); }, err);
  EXPECT_NE(err.find("warning: host node-a GPU 1 (NVIDIA H200): clocks throttled (hw_thermal_slowdown) during "
                     "allgather/nccl float 1 GiB in-place"), std::string::npos) << err;
  EXPECT_NE(err.find("warning: host node-a GPU 1 (NVIDIA H200): temperature 91 C reached the limit of 85 C"),
            std::string::npos) << err;
  EXPECT_NE(err.find("warning: host node-a GPU 0 (NVIDIA H200) NVLink 3: replay errors grew by 2 (found "),
            std::string::npos) << err;
  // The symbol errors appeared after the row began: the read that found them ended during it.
  EXPECT_NE(err.find("warning: host node-a NIC mlx5_0 port 1: symbol_error grew by 5 (found during allgather/nccl "
                     "float 1 GiB in-place; first growth in this run, the total follows at the end)"),
            std::string::npos) << err;
  EXPECT_EQ(h.temp_max_c, 91.0);
  EXPECT_EQ(h.throttle, kThrottleHwThermal);
  EXPECT_EQ(h.nic_errors, 5u);

  // A second row: more symbol errors, the same conditions: nothing is warned about again, the
  // row's column still counts the growth.
  const RowHealth h2 = n.row("row 2", 1, [&] { fake_port(ib, "mlx5_0", 1, 9); }, err);
  EXPECT_EQ(err, "");
  EXPECT_EQ(h2.nic_errors, 4u);
  EXPECT_EQ(h2.nvlink_errors, 0u);
  EXPECT_EQ(h2.temp_max_c, 91.0);

  std::string warnings;
  const std::string out = n.finish(warnings);
  EXPECT_EQ(warnings, "ccbench: warning: error counters grew in this run: host node-a GPU 0 (NVIDIA H200): replay errors "
                      "+2 on 1 link; host node-a NIC mlx5_0 port 1: symbol_error +9\n");
  EXPECT_NE(out.find("# health check error counters: fail (nvlink_errors grew by 2, nic_errors grew by 9)"),
            std::string::npos) << out;
  EXPECT_TRUE(n.sampler->fails_health());
  EXPECT_EQ(n.sampler->run_health().nvlink_errors, 2u);
  EXPECT_EQ(n.sampler->summary()["counters_grown"].size(), 2u);
}

TEST(Sampler, ASteadilyGrowingCounterIsWarnedAboutOnceAndCountedInEveryRowThatReadIt) {
  TempDir dir;
  json answers = fixture();
  json steady = json::array();
  for (int i = 0; i < 5000; ++i) steady.push_back(i);  // one more at every read, as CRC errors on a flaky link
  answers["answers"]["1 nvlink_crc_flit 7"] = steady;
  OneNode n(dir, answers, fast_options());
  std::string all, err;
  std::uint64_t in_rows = 0;
  for (int r = 0; r < 5; ++r) {
    const RowHealth h = n.row(fmt::format("row {}", r), 1, nullptr, err);
    all += err;
    ASSERT_TRUE(h.nvlink_errors) << "a read ended during row " << r;
    EXPECT_GE(*h.nvlink_errors, 1u) << "row " << r;
    in_rows += *h.nvlink_errors;
  }
  EXPECT_EQ(occurrences(all, "warning:"), 1u) << all;
  EXPECT_EQ(occurrences(all, "host node-a GPU 1 (NVIDIA H200) NVLink 7: CRC flit errors grew by 1 (found "), 1u) << all;
  std::string warnings;
  n.finish(warnings);
  const std::uint64_t total = *n.sampler->run_health().nvlink_errors;
  EXPECT_GE(total, in_rows);  // rows' windows do not overlap; the time between them counts for the run
  EXPECT_EQ(warnings, fmt::format("ccbench: warning: error counters grew in this run: host node-a GPU 1 (NVIDIA H200): "
                                  "CRC flit errors +{} on 1 link\n", total));
}

TEST(Sampler, TheMeasuringThreadNeverReadsCountersBetweenSizes) {
  // Reading the counters takes 50 ms here (recorded latency; NVML takes milliseconds per link).
  // Twenty sizes used to cost 40 such reads on the measuring thread; now none.
  TempDir dir;
  json answers = fixture();
  answers["latency_us"] = {{"0 pcie_replays", 50000}};
  OneNode n(dir, answers, fast_options());
  const int at_start = n.source->main_thread_counter_reads();
  EXPECT_GT(at_start, 0);  // the read at start, before anything is measured
  const auto begin = std::chrono::steady_clock::now();
  for (int r = 0; r < 20; ++r) {
    n.sampler->begin_row();
    n.sampler->end_row(fmt::format("row {}", r));
  }
  const auto took = std::chrono::steady_clock::now() - begin;
  EXPECT_EQ(n.source->main_thread_counter_reads(), at_start);
  EXPECT_LT(took, std::chrono::milliseconds(1000)) << "40 counter reads would take 2 s";
  n.source->wait_for_counter_reads(1);  // the counter thread does read meanwhile
  std::string warnings;
  n.finish(warnings);
  EXPECT_EQ(n.source->main_thread_counter_reads(), at_start) << "the read at the end is the counter thread's too";
  EXPECT_EQ(n.sampler->run_health().nvlink_errors, 0u);
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

// The telemetry options of `args` as `run` declares them: parsed through the option layer, then
// checked together.
Options parse(const std::vector<std::string>& args) {
  CLI::App app("test", "test");
  cli::OptionSet set(app);
  Options o;
  add_options(set, o);
  parse_app(app, args);
  check_options(o);
  return o;
}

// The usage error `args` give.
std::string telemetry_option_error(const std::vector<std::string>& args) {
  return ccbench::usage_error([&] { parse(args); });
}

TEST(TelemetryOptions, ValidatedWithClearMessages) {
  EXPECT_TRUE(parse({}).enabled) << "telemetry is on by default";
  EXPECT_EQ(parse({}).interval, std::chrono::milliseconds(100));
  EXPECT_EQ(parse({}).counter_interval, std::chrono::milliseconds(1000));
  EXPECT_NE(telemetry_option_error({"--telemetry-counter-interval", "50"})
                .find("--telemetry-counter-interval: '50' is not valid; expected a whole number from 100 to 600000 "
                      "(milliseconds)"),
            std::string::npos);
  EXPECT_EQ(parse({"--telemetry-counter-interval", "2000"}).counter_interval, std::chrono::milliseconds(2000));
  EXPECT_NE(telemetry_option_error({"--telemetry-interval", "5"})
                .find("--telemetry-interval: '5' is not valid; expected a whole number from 10 to 60000"),
            std::string::npos);
  EXPECT_NE(telemetry_option_error({"--telemetry", "maybe"}).find("--telemetry: unknown value 'maybe' (valid: on, off)"),
            std::string::npos);
  EXPECT_NE(telemetry_option_error({"--temp-limit", "hot"}).find("--temp-limit: 'hot' is not a number; expected degrees Celsius"),
            std::string::npos);
  EXPECT_NE(telemetry_option_error({"--temp-limit", "0"}).find("above 0 and at most 150"), std::string::npos);
  EXPECT_EQ(parse({"--temp-limit", "90.5"}).temp_limit_c, 90.5);
  EXPECT_NE(telemetry_option_error({"--telemetry", "off", "--fail-on-health"}).find("--fail-on-health needs telemetry on"),
            std::string::npos);
}

TEST(TelemetryOptions, TheOptionsThatNeedItRefuseItTurnedOff) {
  EXPECT_TRUE(parse({"--fail-on-health"}).enabled);
  EXPECT_TRUE(parse({"--telemetry-record", "answers.json"}).enabled);
  EXPECT_NE(telemetry_option_error({"--telemetry", "off", "--telemetry-record", "answers.json"})
                .find("--telemetry-record needs telemetry on"),
            std::string::npos);
  EXPECT_TRUE(parse({"--telemetry", "on"}).enabled);
  EXPECT_FALSE(parse({"--telemetry", "off"}).enabled);
}

}  // namespace
}  // namespace ccbench::telemetry
