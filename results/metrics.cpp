#include "results/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "results/format.h"
#include "results/health.h"
#include "results/history.h"
#include "results/sink.h"

namespace ccbench {

namespace {

using Labels = std::vector<std::pair<const char*, std::string>>;

enum class Reduce { set, min, max, sum };

// A label value as the text format escapes it: backslash, double quote and newline.
std::string escaped(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

// 12 significant digits: more than any figure measured holds, and no "0.0029741399999999997".
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{:.12g}", v);
}

// The families of one file, in the order they are declared, each with its samples keyed by their
// label text (sorted, so that the file is the same for the same results).
class Exposition {
 public:
  void declare(const char* name, const char* help) { families_.push_back({name, help, {}}); }
  void add(const char* name, const Labels& labels, double v, Reduce how = Reduce::set) {
    std::string key;
    for (const auto& [k, value] : labels) key += fmt::format("{}{}=\"{}\"", key.empty() ? "" : ",", k, escaped(value));
    auto& samples = find(name).samples;
    const auto [it, added] = samples.emplace(key, v);
    if (added || how == Reduce::set) it->second = v;
    else if (how == Reduce::min) it->second = std::min(it->second, v);
    else if (how == Reduce::max) it->second = std::max(it->second, v);
    else it->second += v;
  }
  std::string text() const {
    std::string out;
    for (const Family& f : families_) {
      if (f.samples.empty()) continue;
      out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, f.help, f.name);
      for (const auto& [labels, v] : f.samples)
        out += fmt::format("{}{}{}{} {}\n", f.name, labels.empty() ? "" : "{", labels, labels.empty() ? "" : "}",
                           number(v));
    }
    return out + "# EOF\n";
  }

 private:
  struct Family {
    std::string name, help;
    std::map<std::string, double> samples;
  };
  Family& find(const char* name) {
    for (Family& f : families_)
      if (f.name == name) return f;
    fail(ExitCode::runtime, "metrics: family {} was not declared", name);  // a bug of this file
  }
  std::vector<Family> families_;
};

void declare_families(Exposition& e) {
  e.declare(
      "ccbench_busbw_bytes_per_second",
      "Bus bandwidth of a case at one size (batch average, as nccl-tests); the lowest of rows sharing the labels");
  e.declare("ccbench_latency_seconds",
            "Median time of one collective of a case at one size (the slowest rank's); "
            "the longest of rows sharing the labels");
  e.declare("ccbench_run_info", "A run of ccbench: what measured it (always 1)");
  e.declare("ccbench_run_start_timestamp_seconds", "When the run started, seconds since the epoch");
  e.declare("ccbench_run_exit_code",
            "The run's exit code (0 ok, 1 wrong results, 3 precondition, 4 threshold, "
            "5 timeout, 6 runtime error)");
  e.declare("ccbench_run_rows", "Rows of the run by status (ok, wrong, skipped, failed)");
  e.declare("ccbench_gpu_temperature_max_celsius", "Hottest GPU temperature seen while the host's rows were measured");
  e.declare("ccbench_gpu_throttled", "1 when a GPU of the host throttled its clocks (benign reasons left out)");
  e.declare("ccbench_gpu_throttle_reason", "1 for each clock-throttle reason seen on a GPU of the host");
  e.declare("ccbench_hardware_error_growth", "Growth of a hardware error counter while the host's rows were measured");
  e.declare("ccbench_accept_passed", "1 when no acceptance rule failed (as accept's exit code 0), 0 when one did");
  e.declare("ccbench_accept_rule_passed",
            "1 when the acceptance rule passed, 0 when it failed; absent when accept "
            "could not judge it in full (N/A)");
  e.declare("ccbench_accept_check_passed", "1 when the check of an acceptance rule passed, 0 when it failed");
  e.declare("ccbench_accept_node_passed", "1 when no row of the node broke a rule, 0 when one did");
  e.declare("ccbench_accept_node_failed_rows", "Rows of the node that broke a rule");
  e.declare("ccbench_accept_link_passed", "1 when no row of the link broke a rule, 0 when one did");
  e.declare("ccbench_accept_link_failed_rows", "Rows of the link that broke a rule");
  e.declare("ccbench_metrics_timestamp_seconds", "When this file was written, seconds since the epoch");
  e.declare("ccbench_metrics_rows_left_out",
            "Rows not exported, by reason (sizes: beyond the per-case cap; "
            "older_run: an older run of the same host and source)");
}

bool links_run(const ResultSet& set) {
  return std::any_of(set.rows.begin(), set.rows.end(), [](const RunRecord& r) { return r.collective == "link"; });
}

// Seconds since the epoch of "2026-12-01T16:12:09Z", or nullopt.
std::optional<double> epoch_of(const std::string& utc) {
  std::tm tm{};
  if (utc.size() < 20 || !strptime(utc.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return std::nullopt;
  return static_cast<double>(timegm(&tm));
}

// The labels of row i with its size, and without (the case it belongs to).
Labels case_labels(const ResultSet& set, size_t i, bool with_size) {
  const RunRecord& r = set.rows[i];
  Labels l = {
      {"collective", r.collective}, {"impl", r.impl}, {"transport", r.transport}, {"dtype", r.dtype}, {"op", r.op},
      {"placement", placement(r)},  {"mode", r.mode}};
  if (with_size) l.emplace_back("size", std::to_string(r.bytes));
  l.insert(l.end(),
           {{"host", row_host(set, i).value_or("")}, {"link", row_link(set, i).value_or("")}, {"group", r.group}});
  return l;
}

std::string key_of(const Labels& l) {
  std::string k;
  for (const auto& [name, v] : l) k += v + '\x1f';
  return k;
}

bool power_of_two(std::uint64_t v) { return v && !(v & (v - 1)); }

// The sizes of each case that are exported: all of them up to kMaxSizesPerCase; beyond, the
// powers of two and the largest. Rows of links.csv: the largest only. Counts the rest.
std::set<std::pair<std::string, std::uint64_t>> kept_sizes(const ResultSet& set, double* left_out) {
  std::map<std::string, std::set<std::uint64_t>> sizes;
  for (size_t i = 0; i < set.rows.size(); ++i)
    if (set.rows[i].status == RowStatus::ok) sizes[key_of(case_labels(set, i, false))].insert(set.rows[i].bytes);
  const bool links = links_run(set);
  std::set<std::pair<std::string, std::uint64_t>> kept;
  for (const auto& [key, all] : sizes) {
    for (std::uint64_t b : all)
      if (b == *all.rbegin() || (!links && (all.size() <= kMaxSizesPerCase || power_of_two(b)))) kept.insert({key, b});
      else if (!links) *left_out += 1;
  }
  return kept;
}

void add_cases(Exposition& e, const ResultSet& set, double* left_out) {
  const auto kept = kept_sizes(set, left_out);
  for (size_t i = 0; i < set.rows.size(); ++i) {
    const RunRecord& r = set.rows[i];
    if (r.status != RowStatus::ok || !kept.count({key_of(case_labels(set, i, false)), r.bytes})) continue;
    const Labels l = case_labels(set, i, true);
    e.add("ccbench_busbw_bytes_per_second", l, std::round(r.busbw_gbps * 1e9),
          Reduce::min);  // whole bytes: no "...99997"
    e.add("ccbench_latency_seconds", l, r.time_median_us / 1e6, Reduce::max);
  }
}

void add_health(Exposition& e, const ResultSet& set) {
  static const std::vector<std::pair<const char*, std::optional<std::uint64_t> RowHealth::*>> counters = {
      {"nvlink_errors", &RowHealth::nvlink_errors}, {"pcie_replays", &RowHealth::pcie_replays},
      {"ecc_corrected", &RowHealth::ecc_corrected}, {"ecc_uncorrected", &RowHealth::ecc_uncorrected},
      {"xid_events", &RowHealth::xid_events},       {"nic_errors", &RowHealth::nic_errors}};
  for (size_t i = 0; i < set.rows.size(); ++i) {
    const RowHealth& h = set.rows[i].health;
    const std::string host = row_host(set, i).value_or("");
    if (h.temp_max_c) e.add("ccbench_gpu_temperature_max_celsius", {{"host", host}}, *h.temp_max_c, Reduce::max);
    if (h.throttle) {
      const std::uint64_t bits = health_relevant_throttle(*h.throttle);
      e.add("ccbench_gpu_throttled", {{"host", host}}, bits ? 1 : 0, Reduce::max);
      if (bits) {
        const std::string names = throttle_names(bits);
        for (size_t from = 0; from < names.size();) {
          const size_t plus = std::min(names.find('+', from), names.size());
          e.add("ccbench_gpu_throttle_reason", {{"host", host}, {"reason", names.substr(from, plus - from)}}, 1);
          from = plus + 1;
        }
      }
    }
    for (const auto& [name, field] : counters)
      if (h.*field)
        e.add("ccbench_hardware_error_growth", {{"host", host}, {"counter", name}}, static_cast<double>(*(h.*field)),
              Reduce::sum);
  }
}

void add_run(Exposition& e, const ResultSet& set) {
  const Json& c = set.context;
  const Labels run = {{"host", run_host(c)}, {"source", links_run(set) ? "links" : "results"}};
  Labels info = run;
  auto number_text = [&c](const char* key) { return c.contains(key) && c[key].is_number() ? c[key].dump() : ""; };
  info.insert(info.end(), {{"version", json_text(c, "ccbench_version")},
                           {"git_hash", json_text(c, "git_hash")},
                           {"device", json_text(c, "device")},
                           {"kind", node_kind(c)},
                           {"ranks", number_text("ranks")},
                           {"nodes", number_text("nodes")}});
  e.add("ccbench_run_info", info, 1);
  if (const auto t = epoch_of(json_text(c, "started_utc"))) e.add("ccbench_run_start_timestamp_seconds", run, *t);
  if (set.exit_code) e.add("ccbench_run_exit_code", run, *set.exit_code);
  for (RowStatus s : {RowStatus::ok, RowStatus::wrong, RowStatus::skipped, RowStatus::failed}) {
    Labels l = run;
    l.emplace_back("status", std::string(row_status_name(s)));
    e.add("ccbench_run_rows", l,
          static_cast<double>(
              std::count_if(set.rows.begin(), set.rows.end(), [s](const RunRecord& r) { return r.status == s; })));
  }
}

void add_places(Exposition& e, const std::vector<PlaceVerdict>& places, const char* label, const char* passed,
                const char* failed_rows) {
  for (const PlaceVerdict& p : places) {
    if (p.state == CheckState::not_available) continue;
    e.add(passed, {{label, p.name}}, p.state == CheckState::pass ? 1 : 0);
    e.add(failed_rows, {{label, p.name}}, p.failed_rows);
  }
}

void add_verdicts(Exposition& e, const AcceptReport& rep) {
  e.add("ccbench_accept_passed", {}, rep.passed ? 1 : 0);
  for (const RuleVerdict& rv : rep.rules) {
    const Labels rule = {{"rule", rv.rule->name}, {"where", rv.rule->where}};
    // As `accept` says it: a rule not judged in full (N/A) is absent, neither passed nor failed.
    if (rv.state() != CheckState::not_available) e.add("ccbench_accept_rule_passed", rule, rv.failed() ? 0 : 1);
    for (const CheckVerdict& cv : rv.checks) {
      if (cv.state == CheckState::not_available) continue;
      Labels l = rule;
      l.emplace_back("check", cv.check);
      e.add("ccbench_accept_check_passed", l, cv.state == CheckState::pass ? 1 : 0);
    }
  }
  add_places(e, rep.nodes, "host", "ccbench_accept_node_passed", "ccbench_accept_node_failed_rows");
  add_places(e, rep.links, "link", "ccbench_accept_link_passed", "ccbench_accept_link_failed_rows");
}

// The runs whose series are exported: the latest of each host and source (run.json's start
// time; the later given when equal). The rows of the others are counted as left out.
std::vector<const ResultSet*> latest_runs(const std::vector<ResultSet>& runs, double* left_out) {
  std::map<std::string, const ResultSet*> latest;
  for (const ResultSet& set : runs) {
    const std::string key = run_host(set.context) + '\x1f' + (links_run(set) ? "links" : "results");
    const ResultSet*& have = latest[key];
    if (have && json_text(have->context, "started_utc") > json_text(set.context, "started_utc")) {
      *left_out += static_cast<double>(set.rows.size());
      continue;
    }
    if (have) *left_out += static_cast<double>(have->rows.size());
    have = &set;
  }
  std::vector<const ResultSet*> out;
  for (const ResultSet& set : runs)
    for (const auto& [key, kept] : latest)
      if (kept == &set) out.push_back(&set);
  return out;
}

}  // namespace

std::string metrics_text(const std::vector<ResultSet>& runs, const AcceptReport* verdicts) {
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  Exposition e;
  declare_families(e);
  double sizes_left_out = 0, older_left_out = 0;
  for (const ResultSet* set : latest_runs(runs, &older_left_out)) {
    add_cases(e, *set, &sizes_left_out);
    add_run(e, *set);
    add_health(e, *set);
  }
  if (verdicts) add_verdicts(e, *verdicts);
  e.add("ccbench_metrics_timestamp_seconds", {}, now);
  e.add("ccbench_metrics_rows_left_out", {{"reason", "sizes"}}, sizes_left_out);
  e.add("ccbench_metrics_rows_left_out", {{"reason", "older_run"}}, older_left_out);
  return e.text();
}

void check_metrics_path(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  if (p.extension() != ".prom" || p.stem().empty())
    fail(ExitCode::usage,
         "--metrics {}: node_exporter's textfile collector reads only files named *.prom; give "
         "a name ending in .prom",
         path);
  std::error_code ec;
  if (fs::is_directory(p, ec))
    fail(ExitCode::usage, "--metrics {}: is a folder; give a file name ending in .prom", path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    fail(ExitCode::usage, "--metrics {}: its folder {} does not exist", path, dir.string());
}

void write_metrics_file(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  check_metrics_path(path);
  const fs::path p(path);
  // A name the textfile collector never reads (it does not end in .prom), in the same folder, so
  // that rename() replaces the file in one step.
  const fs::path tmp = (p.has_parent_path() ? p.parent_path() : fs::path(".")) /
                       fmt::format(".{}.tmp-{}", p.filename().string(), ::getpid());
  auto failed = [&](const char* what) {
    const int err = errno;
    std::error_code ec;
    fs::remove(tmp, ec);
    fail(write_error_code(err), "--metrics: cannot {} {}: {}", what, path, std::strerror(err));
  };
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) failed("write");
  const bool written =
      std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !written) {
    errno = written ? errno : err;
    failed("write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) failed("replace");
}

}  // namespace ccbench
