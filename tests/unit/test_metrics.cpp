// results/metrics: the Prometheus text of runs and verdicts (families, labels, the worst of rows
// sharing labels, the size cap, escaping, unknown health left out), the .prom file written
// atomically; results/store: a store's label never holds its password. The text is also checked
// by promtool and served by a real node_exporter in tests/reports/metrics_e2e.py.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "results/metrics.h"
#include "results/store.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

RunRecord metric_row(std::uint64_t bytes, double busbw, double median_us) {
  return RecordBuilder().bytes(bytes).busbw(busbw).time_us(median_us);  // sound: busbw below twice bytes / time
}

ResultSet run_of(std::vector<RunRecord> rows, const std::string& host = "node01",
                 const std::string& started = "2026-12-01T16:12:09Z") {
  ResultSet s;
  s.rows = std::move(rows);
  s.context = Json{{"started_utc", started}, {"ccbench_version", "0.3.0"}, {"git_hash", "abc"}, {"device", "cpu"},
                   {"ranks", 2}, {"nodes", 1}, {"ranks_per_node", 2},
                   {"ranks_detail", Json::array({{{"rank", 0}, {"host", host}}, {{"rank", 1}, {"host", host}}})}};
  s.exit_code = 0;
  return s;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

const char* kCase = "collective=\"allreduce\",impl=\"ring\",transport=\"shm\",dtype=\"float\",op=\"sum\","
                    "placement=\"out-of-place\",mode=\"eager\",size=\"1048576\",host=\"node01\",link=\"\",group=\"world\"";

TEST(Metrics, CasesRunAndFileFamilies) {
  RunRecord skipped = metric_row(1 << 20, 0, 0);
  skipped.status = RowStatus::skipped;
  skipped.impl = "tree";
  const std::string t = metrics_text({run_of({metric_row(1 << 20, 4.5, 210), skipped})});
  EXPECT_TRUE(has_line(t, "# TYPE ccbench_busbw_bytes_per_second gauge")) << t;
  EXPECT_TRUE(has_line(t, std::string("ccbench_busbw_bytes_per_second{") + kCase + "} 4500000000")) << t;
  EXPECT_TRUE(has_line(t, std::string("ccbench_latency_seconds{") + kCase + "} 0.00021")) << t;
  EXPECT_EQ(t.find("impl=\"tree\""), std::string::npos) << "a skipped row has no figure";
  EXPECT_TRUE(has_line(t, "ccbench_run_info{host=\"node01\",source=\"results\",version=\"0.3.0\",git_hash=\"abc\","
                          "device=\"cpu\",kind=\"cpu x2\",ranks=\"2\",nodes=\"1\"} 1")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_run_start_timestamp_seconds{host=\"node01\",source=\"results\"} 1796141529")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_run_exit_code{host=\"node01\",source=\"results\"} 0")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_run_rows{host=\"node01\",source=\"results\",status=\"skipped\"} 1")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_metrics_rows_left_out{reason=\"sizes\"} 0")) << t;
  EXPECT_NE(t.find("\nccbench_metrics_timestamp_seconds "), std::string::npos) << t;
  EXPECT_EQ(t.substr(t.size() - 6), "# EOF\n");
  EXPECT_EQ(t.find("ccbench_gpu_temperature"), std::string::npos) << "health not read is absent, not zero";
  EXPECT_EQ(t.find("ccbench_accept"), std::string::npos) << "no verdicts without rules";
}

TEST(Metrics, RowsSharingLabelsGiveTheWorst) {
  RunRecord second_cycle = metric_row(1 << 20, 3.0, 400);
  const std::string t = metrics_text({run_of({metric_row(1 << 20, 4.5, 210), second_cycle})});
  EXPECT_TRUE(has_line(t, std::string("ccbench_busbw_bytes_per_second{") + kCase + "} 3000000000")) << t;
  EXPECT_TRUE(has_line(t, std::string("ccbench_latency_seconds{") + kCase + "} 0.0004")) << t;
}

TEST(Metrics, SizesPerCaseAreCapped) {
  std::vector<RunRecord> rows;
  for (std::uint64_t b = 1000; b <= 100 * 1000; b += 1000) rows.push_back(metric_row(b, 1, 1));  // 100 sizes, -i 1000
  rows.push_back(metric_row(65536, 1, 1));
  const std::string t = metrics_text({run_of(rows)});
  size_t samples = 0;
  for (size_t at = t.find("\nccbench_busbw_bytes_per_second{"); at != std::string::npos;
       at = t.find("\nccbench_busbw_bytes_per_second{", at + 1))
    ++samples;
  EXPECT_EQ(samples, 2u) << t;  // 65536 (a power of two) and 100000 (the largest)
  EXPECT_TRUE(has_line(t, "ccbench_metrics_rows_left_out{reason=\"sizes\"} 99")) << t;
}

TEST(Metrics, HealthPerHostAndLabelsEscaped) {
  RunRecord hot = metric_row(1 << 20, 4, 1);
  hot.host = "rack\"1\"\\n";
  hot.health.temp_max_c = 81;
  hot.health.throttle = kThrottleHwThermal | kThrottleGpuIdle;  // idle is benign
  hot.health.nvlink_errors = 3;
  RunRecord hotter = hot;
  hotter.bytes = 1 << 21;
  hotter.health.temp_max_c = 84;
  hotter.health.nvlink_errors = 4;
  hotter.health.pcie_replays = 0;
  const std::string t = metrics_text({run_of({hot, hotter})});
  const std::string host = "host=\"rack\\\"1\\\"\\\\n\"";
  EXPECT_TRUE(has_line(t, "ccbench_gpu_temperature_max_celsius{" + host + "} 84")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_gpu_throttled{" + host + "} 1")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_gpu_throttle_reason{" + host + ",reason=\"hw_thermal_slowdown\"} 1")) << t;
  EXPECT_EQ(t.find("reason=\"gpu_idle\""), std::string::npos) << t;
  EXPECT_TRUE(has_line(t, "ccbench_hardware_error_growth{" + host + ",counter=\"nvlink_errors\"} 7")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_hardware_error_growth{" + host + ",counter=\"pcie_replays\"} 0")) << t;
  EXPECT_EQ(t.find("counter=\"ecc_corrected\""), std::string::npos) << "a counter not read is absent";
}

TEST(Metrics, VerdictsPerRuleNodeAndLinkAndTheLatestRunOfAHost) {
  const std::vector<ResultSet> runs = {run_of({metric_row(1 << 20, 9, 1)}, "node01", "2026-12-01T10:00:00Z"),
                                       run_of({metric_row(1 << 20, 4.5, 1)}, "node01", "2026-12-01T11:00:00Z"),
                                       run_of({metric_row(1 << 20, 7, 1)}, "node02")};
  const std::vector<Rule> rules = parse_rules("rules:\n  - name: busbw\n    require: {min_busbw: 5}\n", "r.yaml");
  const AcceptReport rep = evaluate_rules(rules, {runs[1], runs[2]});
  const std::string t = metrics_text(runs, &rep);
  EXPECT_TRUE(has_line(t, "ccbench_accept_passed 0")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_accept_rule_passed{rule=\"busbw\",where=\"r.yaml:2\"} 0")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_accept_check_passed{rule=\"busbw\",where=\"r.yaml:2\",check=\"min_busbw 5 GB/s\"} 0"))
      << t;
  EXPECT_TRUE(has_line(t, "ccbench_accept_node_passed{host=\"node01\"} 0")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_accept_node_failed_rows{host=\"node01\"} 1")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_accept_node_passed{host=\"node02\"} 1")) << t;
  // node01's 10:00 run is older than its 11:00 run: only the latter's figures.
  EXPECT_NE(t.find("host=\"node01\",link=\"\",group=\"world\"} 4500000000"), std::string::npos) << t;
  EXPECT_EQ(t.find("} 9000000000"), std::string::npos) << t;
  EXPECT_TRUE(has_line(t, "ccbench_metrics_rows_left_out{reason=\"older_run\"} 1")) << t;
  EXPECT_EQ(t.find("ccbench_accept_link_passed"), std::string::npos) << "no row named a link: not available, absent";
}

TEST(Metrics, VerdictsPerLink) {
  RunRecord slow = metric_row(1 << 20, 2, 100), fast = metric_row(1 << 20, 8, 100);
  slow.link = "node01-node02";
  fast.link = "node01-node03";
  fast.bytes = 1 << 21;
  const std::vector<ResultSet> runs = {run_of({slow, fast})};
  const std::vector<Rule> rules = parse_rules("rules:\n  - name: busbw\n    require: {min_busbw: 5}\n", "r.yaml");
  const AcceptReport rep = evaluate_rules(rules, runs);  // holds pointers to the rules
  const std::string t = metrics_text(runs, &rep);
  EXPECT_TRUE(has_line(t, "ccbench_accept_link_passed{link=\"node01-node02\"} 0")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_accept_link_failed_rows{link=\"node01-node02\"} 1")) << t;
  EXPECT_TRUE(has_line(t, "ccbench_accept_link_passed{link=\"node01-node03\"} 1")) << t;
  EXPECT_NE(t.find("link=\"node01-node02\",group=\"world\"} 2000000000"), std::string::npos) << t;
}

TEST(Metrics, TheFileIsAPromFileReplacedWhole) {
  const std::string dir = ::testing::TempDir() + "ccbench-metrics";
  std::filesystem::create_directories(dir);
  for (const std::string& bad : {dir + "/m.txt", dir + "/.prom", dir + "/none/m.prom", dir}) {
    try {
      check_metrics_path(bad);
      FAIL() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
      EXPECT_NE(std::string(e.what()).find("--metrics " + bad + ": "), std::string::npos) << e.what();
    }
  }
  const std::string path = dir + "/ccbench.prom";
  write_metrics_file(path, "first\n");
  write_metrics_file(path, "second\n");
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "second\n");
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u) << "a temporary file was left beside it";
}

TEST(Store, LabelsAndRecordsNeverHoldAPassword) {
  EXPECT_TRUE(is_store_url("postgresql://db1/fleet"));
  EXPECT_TRUE(is_store_url("postgres://db1/fleet"));
  EXPECT_FALSE(is_store_url("/data/history.db"));
  EXPECT_FALSE(is_store_url("postgresql.db"));
  EXPECT_EQ(store_label("/data/history.db"), "/data/history.db");
  EXPECT_EQ(store_label("postgresql://ops:s3cr:et@db1:5432/fleet"), "postgresql://ops@db1:5432/fleet");
  EXPECT_EQ(store_label("postgres://ops@db1/fleet?password=s3cret&sslmode=require"),
            "postgres://ops@db1/fleet?sslmode=require");
  EXPECT_EQ(store_label("postgresql://db1:5432/fleet?password=x"), "postgresql://db1:5432/fleet");
  EXPECT_EQ(store_label("postgresql:///fleet?host=/run/pg&port=5433"), "postgresql:///fleet?host=/run/pg&port=5433");
  EXPECT_EQ(without_store_secrets("ccbench -n 5 --db=postgresql://ops:s3cret@db1/fleet --out x"),
            "ccbench -n 5 --db=postgresql://ops@db1/fleet --out x");
  EXPECT_EQ(without_store_secrets("postgres://a:b@h/d postgresql://c:d@h/e"), "postgres://a@h/d postgresql://c@h/e");
}

TEST(Store, SqliteIsRefusedOnSharedFileSystems) {
  EXPECT_EQ(shared_file_system_name(0x6969), "NFS");
  EXPECT_EQ(shared_file_system_name(0x0BD00BD0), "Lustre");
  EXPECT_EQ(shared_file_system_name(0x47504653), "GPFS (Spectrum Scale)");
  EXPECT_EQ(shared_file_system_name(0xEF53), "");      // ext4
  EXPECT_EQ(shared_file_system_name(0x58465342), "");  // XFS
  EXPECT_EQ(shared_file_system_name(0x01021994), "");  // tmpfs
}

}  // namespace
}  // namespace ccbench
