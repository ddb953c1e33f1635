// results/accept: rules on crafted results (each check kind, not-available columns, nodes and
// links), malformed rule files, and the example rules on the 2 x H200 baseline.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/app/cli.h"
#include "results/accept.h"
#include "results/health.h"
#include "core/error.h"
#include "tests/support/record_builder.h"

namespace ccbench {
namespace {

using test::RecordBuilder;

const std::string kSource = CCBENCH_SOURCE_DIR;

RunRecord gpu_row(const std::string& impl, std::uint64_t bytes, double us, double busbw) {
  return RecordBuilder()
      .impl(impl)
      .transport(impl == "nccl" ? "nccl" : "cuda_ipc")
      .device("gpu")
      .bytes(bytes)
      .ranks(2, 2, 1)
      .times_us(us, us, us, us * 1.01, us * 1.01)
      .cv(0.005)
      .busbw(busbw, busbw)
      .checked(0);  // -c 1, every element right
}

// One node ("node01"): nccl at 8 B, 1 MiB and 1 GiB.
ResultSet one_node_run() {
  ResultSet s;
  s.rows = {gpu_row("nccl", 8, 10, 0), gpu_row("nccl", 1 << 20, 17, 76), gpu_row("nccl", 1 << 30, 3300, 325)};
  s.extra.resize(s.rows.size());
  s.context = Json::parse(R"({"ranks_detail": [{"rank": 0, "host": "node01"}, {"rank": 1, "host": "node01"}]})");
  return s;
}

AcceptReport check(const std::string& yaml, const std::vector<ResultSet>& runs) {
  static std::vector<Rule> rules;  // the report points at its rules
  rules = parse_rules(yaml, "t.yaml");
  return evaluate_rules(rules, runs);
}

std::string rules_error(const std::string& yaml) {
  try {
    parse_rules(yaml, "bad.yaml");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return "";
}

TEST(Accept, PassingRulesSayPassPerRuleAndPerNode) {
  const AcceptReport r = check(R"(
rules:
  - name: big
    select: {collective: allreduce, impl: nccl, min_size: 1G}
    require: {min_busbw: 300, max_time_cv: 0.05, max_p95_over_median: 1.1}
  - name: small
    select: {max_size: 64K}
    require: {max_latency_us: 20, max_wrong: 0}
)", {one_node_run()});
  EXPECT_TRUE(r.passed) << r.text();
  const std::string t = r.text();
  EXPECT_NE(t.find("# rule 'big' (t.yaml:3): PASS (1 measured row selected)\n#   PASS min_busbw 300 GB/s\n"), std::string::npos) << t;
  EXPECT_NE(t.find("# rule 'small' (t.yaml:6): PASS (1 measured row selected)"), std::string::npos) << t;
  EXPECT_NE(t.find("# per node:\n#   PASS node01: 0 of 3 rows broke a rule\n"), std::string::npos) << t;
  EXPECT_NE(t.find("# per link:\n#   N/A  (all): not available for 3 rows: the rows carry no 'link' column"),
            std::string::npos) << t;
  EXPECT_NE(t.find("# Acceptance: PASS (0 of 2 rules failed)"), std::string::npos) << t;
}

TEST(Accept, EachFailureKindNamesTheRowsThatBrokeIt) {
  ResultSet run = one_node_run();
  run.rows[0].time_median_us = 40;             // latency
  run.rows[0].time_p95_us = run.rows[0].time_max_us = 41;
  run.rows[1].time_cv = 0.3;                   // variation
  run.rows[1].time_p95_us = 17 * 1.5;
  run.rows[1].time_max_us = 17 * 1.6;
  run.rows[2].busbw_gbps = 250;                // bandwidth
  run.rows[2].wrong = 3;                       // correctness
  run.rows[2].status = RowStatus::wrong;
  const AcceptReport r = check(R"(
rules:
  - require: {min_busbw: 300}
    select: {min_size: 1G}
  - require: {max_latency_us: 20}
    select: {max_size: 8}
  - require: {max_time_cv: 0.1, max_p95_over_median: 1.2}
  - require: {max_wrong: 0}
)", {run});
  EXPECT_FALSE(r.passed);
  const std::string t = r.text();
  EXPECT_NE(t.find("#   FAIL min_busbw 300 GB/s\n#          allreduce  impl nccl  transport nccl  device gpu  ranks 2 (2 "
                   "per node)  dtype float  op sum  mode eager  out-of-place  size 1 GiB: 250 GB/s < 300\n"),
            std::string::npos) << t;
  EXPECT_NE(t.find("#   FAIL max_latency_us 20 us\n#          allreduce  impl nccl"), std::string::npos) << t;
  EXPECT_NE(t.find("size 8 B: 40 us > 20\n"), std::string::npos) << t;
  EXPECT_NE(t.find("#   FAIL max_time_cv 0.1\n#          allreduce  impl nccl"), std::string::npos) << t;
  EXPECT_NE(t.find("size 1 MiB: 0.3 > 0.1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("size 1 MiB: 1.5 > 1.2\n"), std::string::npos) << t;
  EXPECT_NE(t.find("size 1 GiB: 3 elements > 0\n"), std::string::npos) << t;
  EXPECT_NE(t.find("# per node:\n#   FAIL node01: 3 of 3 rows broke a rule\n"), std::string::npos) << t;
  EXPECT_NE(t.find("# Acceptance: FAIL (4 of 4 rules failed)"), std::string::npos) << t;
}

TEST(Accept, FailedRowsAndSelectionsWithoutMeasuredRowsFail) {
  ResultSet run = one_node_run();
  run.rows[1].status = RowStatus::failed;
  run.rows[1].reason = "NCCL error";
  run.rows[2].status = RowStatus::skipped;
  run.rows[2].reason = "needs 2 GPUs";
  const AcceptReport r = check(R"(
rules:
  - {select: {min_size: 1M, max_size: 1M}, require: {max_latency_us: 100}}
  - {select: {min_size: 1G}, require: {min_busbw: 1}}
  - {select: {impl: ring}, require: {min_busbw: 1}}
  - {select: {max_size: 8}, require: {max_latency_us: 100}}
)", {run});
  EXPECT_FALSE(r.passed);
  const std::string t = r.text();
  EXPECT_NE(t.find("size 1 MiB: not measured: failed (NCCL error)"), std::string::npos) << t;
  EXPECT_NE(t.find("# rule 'rule 2' (t.yaml:4): FAIL (0 measured rows selected)\n#   FAIL selects measured rows\n#"
                   "          every row it selects was skipped, e.g. allreduce  impl nccl"),
            std::string::npos) << t;
  EXPECT_NE(t.find("size 1 GiB: skipped (needs 2 GPUs)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("# rule 'rule 3' (t.yaml:5): FAIL (0 measured rows selected)\n#   FAIL selects measured rows\n#"
                   "          no row of the results matches the selection\n"),
            std::string::npos) << t;
  EXPECT_NE(t.find("# rule 'rule 4' (t.yaml:6): PASS"), std::string::npos) << t;
  EXPECT_NE(t.find("# Acceptance: FAIL (3 of 4 rules failed)"), std::string::npos) << t;
}

TEST(Accept, CeilingStragglerAndTelemetryAreCheckedWhereTheRowsCarryThemElseNotAvailable) {
  const std::string rules = R"(
rules:
  - select: {min_size: 1G}
    require: {min_busbw_fraction_of_ceiling: 0.9, min_busbw_fraction_of_prediction: 0.9, max_straggler_ratio: 1.2,
              max_group_outlier_ratio: 1.2, max_temperature_c: 85, max_throttle_events: 0, max_error_counter_growth: 0}
)";
  const AcceptReport none = check(rules, {one_node_run()});
  EXPECT_TRUE(none.passed) << none.text();
  const std::string t = none.text();
  for (const char* c : {"link_ceiling[GB/s]", "predicted_busbw[GB/s]", "straggler_ratio", "group_outlier_ratio",
                        "gpu_temp_max[C]", "throttle_events", "error_counter_growth"})
    EXPECT_NE(t.find(fmt::format("(not available: no selected row carries the column '{}')", c)), std::string::npos)
        << c << "\n" << t;

  ResultSet run = one_node_run();
  run.extra[2] = {{kTemperatureColumn, "91"}, {kThrottleColumn, "0"}, {kErrorGrowthColumn, "2"}};
  run.rows[2].link_ceiling_gbps = 397;  // record columns since runs write them (results/record.h)
  run.rows[2].predicted_busbw_gbps = 340;
  run.rows[2].straggler_ratio = 1.5;  // record columns since the per-rank times (results/stragglers.h)
  run.rows[2].group_outlier_ratio = 1.0;
  const AcceptReport some = check(rules, {run});
  EXPECT_FALSE(some.passed);
  const std::string u = some.text();
  EXPECT_NE(u.find("size 1 GiB: 0.8186 < 0.9\n"), std::string::npos) << u;  // 325 / 397
  EXPECT_NE(u.find("#   PASS min_busbw_fraction_of_prediction 0.9\n"), std::string::npos) << u;  // 325 / 340
  EXPECT_NE(u.find("size 1 GiB: 1.5 > 1.2\n"), std::string::npos) << u;
  EXPECT_NE(u.find("#   PASS max_group_outlier_ratio 1.2\n"), std::string::npos) << u;
  EXPECT_NE(u.find("size 1 GiB: 91 C > 85\n"), std::string::npos) << u;
  EXPECT_NE(u.find("#   PASS max_throttle_events 0\n"), std::string::npos) << u;
  EXPECT_NE(u.find("size 1 GiB: 2 > 0\n"), std::string::npos) << u;
}

TEST(Accept, TelemetryLimitsReadTheRowsHealth) {
  const std::string rules = R"(
rules:
  - select: {min_size: 1G}
    require: {max_temperature_c: 85, max_throttle_events: 0, max_error_counter_growth: 0}
)";
  ResultSet run = one_node_run();
  run.rows[2].health.temp_max_c = 91;                        // --telemetry on: the row's own figures
  run.rows[2].health.throttle = kThrottleSwPowerCap | kThrottleHwThermal;  // two reasons
  run.rows[2].health.nvlink_errors = 3;
  run.rows[2].health.pcie_replays = 1;
  const std::string u = check(rules, {run}).text();
  EXPECT_NE(u.find("size 1 GiB: 91 C > 85\n"), std::string::npos) << u;
  EXPECT_NE(u.find("size 1 GiB: 2 > 0\n"), std::string::npos) << u;  // throttle reasons
  EXPECT_NE(u.find("size 1 GiB: 4 > 0\n"), std::string::npos) << u;  // 3 NVLink + 1 PCIe replay
}

TEST(Accept, VerdictsPerNodeAndPerLinkWhereTheRowsNameThem) {
  ResultSet run = one_node_run();
  run.context = Json::parse(R"({"ranks_detail": [{"rank": 0, "host": "a"}, {"rank": 1, "host": "b"}]})");
  const std::string rules = "rules:\n  - {select: {min_size: 1M}, require: {min_busbw: 100}}\n";
  const std::string t = check(rules, {run}).text();  // two hosts, rows not attributed
  EXPECT_NE(t.find("#   N/A  (all): not available for 3 rows: the run spans several hosts and its rows carry no "
                   "'host' column"),
            std::string::npos) << t;
  run.extra = {{{"host", "a"}, {"link", "a-b"}}, {{"host", "a"}, {"link", "a-b"}}, {{"host", "b"}, {"link", "b-c"}}};
  const std::string u = check(rules, {run}).text();
  EXPECT_NE(u.find("# per node:\n#   FAIL a: 1 of 2 rows broke a rule\n#   PASS b: 0 of 1 rows broke a rule\n"),
            std::string::npos) << u;  // 1 MiB at 76 GB/s on a
  EXPECT_NE(u.find("# per link:\n#   FAIL a-b: 1 of 2 rows broke a rule\n#   PASS b-c: 0 of 1 rows broke a rule\n"),
            std::string::npos) << u;
}

TEST(Accept, MinBusbwQuickForm) {
  std::vector<Rule> rules = {min_busbw_rule(300)};
  AcceptReport r = evaluate_rules(rules, {one_node_run()});
  EXPECT_FALSE(r.passed);  // 1 MiB at 76 GB/s; 8 B is below the 1 MiB start
  EXPECT_NE(r.text().find("size 1 MiB: 76 GB/s < 300\n"), std::string::npos) << r.text();
  EXPECT_EQ(r.text().find("size 8 B"), std::string::npos) << r.text();
  rules = {min_busbw_rule(70)};
  EXPECT_TRUE(evaluate_rules(rules, {one_node_run()}).passed);
}

// The rows of one_node_run() with `value` in every time and bandwidth figure, as a damaged or
// hand-edited results.csv holds them; lines 3 to 5 of "results.csv".
ResultSet damaged_run(double value) {
  ResultSet s = one_node_run();
  s.csv_path = "results.csv";
  s.lines = {3, 4, 5};
  for (RunRecord& r : s.rows)
    for (double* f : {&r.time_avg_us, &r.time_median_us, &r.time_min_us, &r.time_p95_us, &r.time_max_us, &r.time_cv,
                      &r.algbw_gbps, &r.busbw_gbps, &r.busbw_median_gbps})
      *f = value;
  return s;
}

TEST(Accept, DamagedValuesFailEveryCheckNeverPass) {
  const std::string rules = R"(rules:
  - name: all
    require: {min_busbw: 1, max_latency_us: 1000000, max_time_cv: 100, max_p95_over_median: 100}
)";
  for (double value : {std::nan(""), -1.0, std::numeric_limits<double>::infinity()}) {
    const AcceptReport r = check(rules, {damaged_run(value)});
    EXPECT_FALSE(r.passed) << value << "\n" << r.text();
    ASSERT_EQ(r.rules.size(), 1u);
    ASSERT_EQ(r.rules[0].checks.size(), 4u);
    for (const CheckVerdict& c : r.rules[0].checks) {
      EXPECT_EQ(c.state, CheckState::fail) << value << " " << c.check;
      EXPECT_EQ(c.broken.size(), 3u) << value << " " << c.check;
    }
    EXPECT_NE(r.text().find("DAMAGED, not judged (results.csv:4: time_avg[us] is "), std::string::npos) << r.text();
    std::vector<Rule> quick = {min_busbw_rule(1)};
    EXPECT_FALSE(evaluate_rules(quick, {damaged_run(value)}).passed) << value;  // --min-busbw
  }
}

TEST(Accept, AForeignColumnThatIsNotAFiniteNumberFails) {
  ResultSet s = one_node_run();
  for (auto& e : s.extra) e[kTemperatureColumn] = "nan";
  const AcceptReport r = check("rules:\n  - require: {max_temperature_c: 90}\n", {s});
  EXPECT_FALSE(r.passed) << r.text();
  EXPECT_NE(r.text().find("DAMAGED, not judged (row 2: gpu_temp_max[C] is nan)"), std::string::npos) << r.text();
}

TEST(Accept, BadRuleFilesNameFileLineAndWhatIsExpected) {
  EXPECT_EQ(rules_error("rules:\n  - name: x\n    require: {min_busbw: 3\n"),
            "bad.yaml:4:1: not valid YAML: end of map flow not found");
  const std::string unknown = rules_error("rules:\n  - require:\n      min_bw: 300\n");
  EXPECT_EQ(unknown.rfind("bad.yaml:3:7: unknown key 'min_bw' in 'require' (valid: min_busbw, ", 0), 0u) << unknown;
  EXPECT_EQ(rules_error("rules:\n  - select: {colective: allreduce}\n    require: {max_wrong: 0}\n"),
            "bad.yaml:2:14: unknown key 'colective' in 'select' (valid: collective, impl, transport, dtype, op, mode, "
            "group, min_size, max_size) (did you mean 'collective'?)");
  EXPECT_EQ(rules_error("rules:\n  - require: {min_busbw: fast}\n"),
            "bad.yaml:2:26: 'min_busbw': 'fast' is not valid; expected a number >= 0 (GB/s)");
  EXPECT_EQ(rules_error("rules:\n  - select: {min_size: 1X}\n    require: {max_wrong: 0}\n"),
            "bad.yaml:2:24: 'min_size': '1X' is not a size; expected bytes, optionally with K, M, G or T (powers of "
            "1024)");
  EXPECT_EQ(rules_error("rules:\n  - name: no limits\n"), "bad.yaml:2:5: rule 'no limits' has no 'require'");
  EXPECT_EQ(rules_error("rule:\n  - require: {max_wrong: 0}\n"),
            "bad.yaml: expected a mapping with the key 'rules' holding a list of rules (see docs/examples/rules/)");
  EXPECT_EQ(rules_error("rules: []\n"), "bad.yaml:1:8: 'rules' must be a non-empty list of rules");
  EXPECT_EQ(rules_error("rules:\n  - {require: {max_wrong: 0}}\nextra: 1\n"),
            "bad.yaml:3:1: unknown key 'extra' in the rules file (valid: rules)");
  try {
    load_rules("/nonexistent/rules.yaml");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--rules: cannot read /nonexistent/rules.yaml: No such file or directory");
  }
}

// A `select` value that names nothing ccbench writes is a usage error (exit 2) naming the file, the
// line, what is valid and the closest name; before, `collective: allreduc` selected no row and the
// rule FAILED (exit 4) as if the cluster had.
TEST(Accept, SelectValuesAreCheckedAgainstCcbenchsVocabularies) {
  const SelectVocabulary known = rule_vocabulary();
  auto error_of = [&](const std::string& yaml) -> std::string {
    try {
      parse_rules(yaml, "r.yaml", known);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage);
      return e.what();
    }
    ADD_FAILURE() << "accepted:\n" << yaml;
    return "";
  };
  const std::string typo = error_of("rules:\n  - select: {collective: allreduc}\n    require: {min_busbw: 1}\n");
  EXPECT_EQ(typo.rfind("r.yaml:2:26: 'collective': unknown value 'allreduc': it would select no row (valid: "
                       "allreduce, allgather, ",
                       0),
            0u) << typo;
  EXPECT_NE(typo.find("(did you mean 'allreduce'?)"), std::string::npos) << typo;
  EXPECT_NE(error_of("rules:\n  - select: {transport: [shm, shmm]}\n    require: {min_busbw: 1}\n")
                .find("'transport': unknown value 'shmm'"),
            std::string::npos);
  EXPECT_NE(error_of("rules:\n  - select: {impl: rign}\n    require: {min_busbw: 1}\n").find("did you mean 'ring'"),
            std::string::npos);
  EXPECT_NE(error_of("rules:\n  - select: {mode: graf}\n    require: {min_busbw: 1}\n").find("valid: eager, graph"),
            std::string::npos);
  // Every label the transport column carries is valid; aliases take the rows' spelling.
  const auto rules = parse_rules("rules:\n  - select: {transport: [shm+mpi, p2p+net/tcp, 'nccl:NET/Socket', cuda_ipc, "
                                 "net/ib, '-'], dtype: fp16, collective: all_reduce, op: none}\n"
                                 "    require: {min_busbw: 1}\n",
                                 "r.yaml", known);
  EXPECT_EQ(rules[0].select.transport,
            (std::vector<std::string>{"shm+mpi", "p2p+net/tcp", "nccl:NET/Socket", "cuda_ipc", "net/ib", "-"}));
  EXPECT_EQ(rules[0].select.dtype, std::vector<std::string>{"half"});
  EXPECT_EQ(rules[0].select.collective, std::vector<std::string>{"allreduce"});
  // The example rules use only known values.
  for (const char* file : {"/docs/examples/rules/h200x2.yaml", "/docs/examples/rules/nvswitch8.yaml"})
    EXPECT_NO_THROW(load_rules(kSource + file, "--rules", known)) << file;
}

TEST(Accept, ExampleRulesPassOnTheBaselinesTheyWereWrittenFrom) {
  const std::vector<Rule> h200 = load_rules(kSource + "/docs/examples/rules/h200x2.yaml");
  const AcceptReport r =
      evaluate_rules(h200, {read_result_set(kSource + "/tests/fixtures/h200x2-20261130-sweep-cc01c2c")});
  EXPECT_TRUE(r.passed) << r.text();
  EXPECT_NE(r.text().find("(not available: no selected row carries the column 'link_ceiling[GB/s]')"), std::string::npos);
  EXPECT_NE(r.text().find("#   PASS "), std::string::npos);
  // The 8-GPU rules load, and the 2-GPU figures fail them: 2 GPUs are not an NVSwitch node.
  const std::vector<Rule> nvs = load_rules(kSource + "/docs/examples/rules/nvswitch8.yaml");
  const AcceptReport n =
      evaluate_rules(nvs, {read_result_set(kSource + "/tests/fixtures/h200x2-20261130-sweep-cc01c2c")});
  EXPECT_FALSE(n.passed) << n.text();
  EXPECT_NE(n.text().find("nccl all-reduce bandwidth, 1 GiB and up' (" + kSource +
                          "/docs/examples/rules/nvswitch8.yaml:11): FAIL"),
            std::string::npos) << n.text();
}

TEST(Accept, RunAndAcceptCommandLinesReadTheRulesBeforeMeasuring) {
  const std::string rules = kSource + "/docs/examples/rules/h200x2.yaml";
  std::vector<const char*> argv = {"ccbench", "--accept", rules.c_str(), "--min-busbw", "300"};
  const auto run = std::get<RunOptions>(parse_command_line(static_cast<int>(argv.size()), argv.data()));
  ASSERT_EQ(run.accept_rules.size(), 9u);  // 8 from the file, then --min-busbw
  EXPECT_EQ(run.accept_rules.back().where, "--min-busbw");
  argv = {"ccbench", "accept", "results", "--min-busbw", "5", "--junit", "j.xml"};
  const auto acc = std::get<AcceptRequest>(parse_command_line(static_cast<int>(argv.size()), argv.data()));
  EXPECT_EQ(acc.runs, std::vector<std::string>{"results"});
  EXPECT_EQ(acc.junit, "j.xml");
  for (const auto& [args, message] : std::vector<std::pair<std::vector<const char*>, std::string>>{
           {{"ccbench", "--accept", "/nonexistent.yaml"}, "--accept: cannot read /nonexistent.yaml"},
           {{"ccbench", "--min-busbw", "-3"}, "--min-busbw: '-3' is not valid; expected GB/s above 0"},
           {{"ccbench", "accept", "results"}, "accept: give --rules FILE.yaml, --min-busbw GBPS or both"}}) {
    try {
      parse_command_line(static_cast<int>(args.size()), args.data());
      ADD_FAILURE() << message;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage);
      EXPECT_EQ(std::string(e.what()).rfind(message, 0), 0u) << e.what();
    }
  }
}

TEST(Accept, JunitCountsAndEscapes) {
  ResultSet run = one_node_run();
  run.rows[2].busbw_gbps = 1;
  const AcceptReport r = check("rules:\n  - {name: 'a<b & \"c\"', select: {min_size: 1G}, require: {min_busbw: 300, "
                               "min_busbw_fraction_of_ceiling: 0.5}}\n", {run});
  const std::string x = r.junit_xml("t");
  EXPECT_NE(x.find("<testsuites name=\"ccbench accept t\" tests=\"4\" failures=\"2\" errors=\"0\" skipped=\"2\""),
            std::string::npos) << x;
  EXPECT_NE(x.find("<testsuite name=\"a&lt;b &amp; &quot;c&quot;\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"1\""),
            std::string::npos) << x;
  EXPECT_NE(x.find("<failure message=\"1 row broke it\" type=\"threshold\">allreduce  impl nccl"), std::string::npos) << x;
  EXPECT_NE(x.find("<skipped message=\"not available: no selected row carries the column"), std::string::npos) << x;
  EXPECT_NE(x.find("<testcase classname=\"ccbench.accept.nodes\" name=\"node01\" time=\"0\">\n      <failure"),
            std::string::npos) << x;
}

// A row whose data was never checked (-c 0; a links.csv row) has no wrong count: max_wrong cannot
// pass on it. The check, its rule and the overall line say N/A; a wrong row still fails.
TEST(Accept, UncheckedRowsAreNotAvailableForMaxWrongNeverPass) {
  ResultSet run = one_node_run();
  for (RunRecord& r : run.rows) r.wrong.reset();
  const AcceptReport r = check("rules:\n  - {name: every row correct, require: {max_wrong: 0}}\n", {run});
  const std::string t = r.text();
  EXPECT_TRUE(r.passed) << t;  // nothing failed: exit 0, but no PASS said
  EXPECT_NE(t.find("# rule 'every row correct' (t.yaml:2): N/A (3 measured rows selected)\n#   N/A  max_wrong 0 "
                   "elements  (not available for 3 of 3 selected rows: their data was not checked (-c 0, or rows of "
                   "links.csv); select checked rows, or run with -c 1)"),
            std::string::npos) << t;
  EXPECT_NE(t.find("# Acceptance: N/A (0 of 1 rule failed, 1 not judged in full: see N/A above)"), std::string::npos) << t;
  EXPECT_EQ(t.find("PASS max_wrong"), std::string::npos) << t;
  run.rows[1].wrong = 0;  // one checked: still not every row
  EXPECT_NE(check("rules:\n  - {require: {max_wrong: 0}}\n", {run}).text().find("not available for 2 of 3"),
            std::string::npos);
  run.rows[2].wrong = 5;
  run.rows[2].status = RowStatus::wrong;
  const AcceptReport w = check("rules:\n  - {require: {max_wrong: 0}}\n", {run});
  EXPECT_FALSE(w.passed) << w.text();
  EXPECT_NE(w.text().find("#   FAIL max_wrong 0 elements"), std::string::npos) << w.text();
  // The shipped rules for CPU nodes select the rows ccbench checks: over a -c 0 run, N/A.
  ResultSet cpu = run;
  for (RunRecord& r : cpu.rows) {
    r.impl = "ring";
    r.device = "cpu";
    r.status = RowStatus::ok;
    r.wrong.reset();
  }
  const std::vector<Rule> cpu_rules = load_rules(kSource + "/docs/examples/rules/cpu-node.yaml");
  const AcceptReport shipped = evaluate_rules(cpu_rules, {cpu});  // the report points at its rules
  EXPECT_NE(shipped.text().find("rule 'every row correct' (" + kSource + "/docs/examples/rules/cpu-node.yaml:"),
            std::string::npos) << shipped.text();
  EXPECT_NE(shipped.text().find("): N/A (3 measured rows selected)\n#   N/A  max_wrong 0"), std::string::npos)
      << shipped.text();
}

TEST(Accept, AKeyGivenTwiceIsAnErrorNamingBothLines) {
  EXPECT_EQ(rules_error("rules:\n  - name: x\n    require: {max_wrong: 0}\n    require: {min_busbw: 1000}\n"),
            "bad.yaml:4:5: 'require' is given twice in a rule (first at line 3); give each key once, with every limit "
            "or value under it");
  EXPECT_EQ(rules_error("rules:\n  - require: {min_busbw: 1, min_busbw: 2}\n"),
            "bad.yaml:2:29: 'min_busbw' is given twice in 'require' (first at line 2); give each key once, with every "
            "limit or value under it");
  EXPECT_EQ(rules_error("rules:\n  - {require: {max_wrong: 0}}\nrules:\n  - {require: {max_wrong: 1}}\n"),
            "bad.yaml:3:1: 'rules' is given twice in the rules file (first at line 1); give each key once, with every "
            "limit or value under it");
}

TEST(Accept, RowsNameTheirLinkAndCycleAndLongListsAreCapped) {
  ResultSet run;
  for (int i = 0; i < 25; ++i) {
    RunRecord r = gpu_row("links", 1 << 20, 100, 1);
    r.collective = "link";
    r.link = fmt::format("vm:0-vm:{}", i + 1);
    r.cycle = 1 + i % 2;
    run.rows.push_back(r);
  }
  run.extra.resize(run.rows.size());
  const AcceptReport r = check("rules:\n  - {require: {min_busbw: 5}}\n", {run});
  const std::string t = r.text();
  EXPECT_NE(t.find("size 1 MiB  cycle 1  link vm:0-vm:1: 1 GB/s < 5\n"), std::string::npos) << t;
  EXPECT_NE(t.find("size 1 MiB  cycle 2  link vm:0-vm:2: 1 GB/s < 5\n"), std::string::npos) << t;
  EXPECT_NE(t.find("#          ... and 15 more rows\n"), std::string::npos) << t;
  EXPECT_EQ(t.find("link vm:0-vm:11:"), std::string::npos) << t;  // the 11th is counted, not listed
  const std::string x = r.junit_xml("t");
  EXPECT_NE(x.find("<failure message=\"25 rows broke it\" type=\"threshold\">"), std::string::npos) << x;
  EXPECT_NE(x.find("link vm:0-vm:10: 1 GB/s &lt; 5\n... and 15 more rows\n</failure>"), std::string::npos) << x;
  EXPECT_NE(x.find("<testcase classname=\"ccbench.accept.links\" name=\"vm:0-vm:1\""), std::string::npos) << x;
}

}  // namespace
}  // namespace ccbench
