#include "harness/app/results_cli.h"

#include <fmt/format.h>

#include "collectives/implementation.h"
#include "collectives/types.h"
#include "core/error.h"
#include "core/suggest.h"
#include "harness/app/run_cli.h"
#include "harness/app/shared_options.h"
#include "results/links.h"
#include "transports/labels.h"

namespace ccbench {

namespace {

// The canonical names of `names`, with its parser for aliases ("fp16" is "half").
template <typename T>
SelectVocabulary::Known known_from(const cli::Names<T>& names, std::vector<std::string> more = {}) {
  SelectVocabulary::Known k;
  for (const auto& [n, v] : names.canonical) k.names.push_back(n);
  k.names.insert(k.names.end(), more.begin(), more.end());
  k.canonical = [names, more](const std::string& v) -> std::optional<std::string> {
    if (std::find(more.begin(), more.end(), v) != more.end()) return v;
    for (const auto& [n, x] : names.canonical)
      if (n == v) return n;
    if (auto x = names.parse(v))
      for (const auto& [n, y] : names.canonical)
        if (y == *x) return n;
    return std::nullopt;
  };
  return k;
}

// A filter value of `history`, checked as rules' `select` values are.
void add_filter(cli::OptionSet& set, const cli::Spec& spec, std::string& target, SelectVocabulary::Known known) {
  const std::string label = cli::flag_label(spec.names);
  set.value(spec, "NAME", "", "", [&target, known, label](const std::string& v) {
    std::optional<std::string> row;
    if (known.canonical) row = known.canonical(v);
    else if (std::find(known.names.begin(), known.names.end(), v) != known.names.end()) row = v;
    if (!row)
      fail(ExitCode::usage, "{}: unknown value '{}': it names no row ccbench writes (valid: {}){}", label, v,
           cli::joined(known.names), did_you_mean(v, known.names));
    target = *row;
  });
}

}  // namespace

SelectVocabulary rule_vocabulary() {
  SelectVocabulary v;
  v.keys["collective"] = known_from(collective_names(), {"link"});  // "link": rows of links.csv
  v.keys["dtype"] = known_from(data_type_names());
  v.keys["op"] = known_from(reduce_op_names(), {"none"});  // "none": collectives that only move data
  SelectVocabulary::Known impl;
  impl.names = impl_names();
  impl.names.push_back("links");  // rows of links.csv
  v.keys["impl"] = impl;
  SelectVocabulary::Known transport;
  transport.names = transport_label_words();
  transport.canonical = [](const std::string& t) -> std::optional<std::string> {
    if (is_transport_label(t)) return t;
    return std::nullopt;
  };
  v.keys["transport"] = transport;
  std::vector<std::string> modes = {"eager", "graph"};
  modes.insert(modes.end(), kLinkModes.begin(), kLinkModes.end());  // rows of links.csv
  v.keys["mode"] = SelectVocabulary::Known{modes, nullptr};
  return v;
}

// ----------------------------------------------------------------------------------------------

CompareCommand::CompareCommand(CLI::App& app)
    : sub_(app.add_subcommand("compare", "compare two runs (results.csv files or folders), noise-aware")), set_(*sub_) {
  set_.texts({"before", "BEFORE [AFTER]: results.csv files or results folders (one run with --pair)"}, req_.runs,
             "PATH", 1, 2)
      ->required();
  set_.number({"--tolerance", "slowdown below which nothing is flagged, whatever the noise"}, req_.options.tolerance,
              {.lo = 0, .hi = 1, .what = "a fraction", .hi_open = true}, "FRACTION");
  set_.flag({"--allow-missing", "a baseline row absent now is not a failure"}, req_.options.allow_missing);
  set_.flag({"--allow-skipped", "a row ok before and skipped now is not a failure"}, req_.options.allow_skipped);
  set_.flag({"--count-isolated", "count a slowdown at one size whose neighbouring sizes are not slower"},
            req_.options.count_isolated);
  set_.texts({"--pair",
              "compare rows that differ in one field: FIELD=BEFORE:AFTER, e.g. impl=ring:nccl or "
              "transport=tcp:shm (repeatable)"},
             pairs_, "FIELD=A:B", 1, 1);
  set_.choice({"--format", "how the report is written"}, req_.options.format, {"table", "md", "json"});
  set_.flag({"--against-fleet", "compare one run with the median of the other nodes of its kind"}, against_fleet_);
  add_db(set_, req_.fleet_db, "history for --against-fleet");
}

CompareRequest CompareCommand::finish() {
  for (const std::string& p : pairs_) req_.options.pairs.push_back(parse_compare_pair(p));
  if (against_fleet_) {
    req_.fleet_db = history_path(req_.fleet_db);
    if (req_.fleet_db.empty()) fail(ExitCode::usage, "compare --against-fleet: give --db FILE or set CCBENCH_DB");
    if (req_.runs.size() != 1) fail(ExitCode::usage, "compare --against-fleet: give one run (the node to check)");
  } else if (req_.runs.size() == 1 && pairs_.empty()) {
    fail(ExitCode::usage, "compare: one run given; give BEFORE and AFTER, or one run with --pair FIELD=A:B");
  }
  return req_;
}

AcceptCommand::AcceptCommand(CLI::App& app)
    : sub_(app.add_subcommand("accept", "check results against acceptance rules; exit 4 when one fails")), set_(*sub_) {
  set_.texts({"runs", "results.csv or links.csv files, or results folders"}, req_.runs, "PATH", 1, -1)->required();
  set_.text(
      {"--rules", "rules file (YAML; examples: share/ccbench/rules/ installed, docs/examples/rules/ in the source)"},
      rules_file_, "FILE");
  set_.number({"--min-busbw", "busbw every size from 1 MiB must reach", "none"}, min_busbw_,
              {.lo = 0, .what = "GB/s", .lo_open = true}, "GBPS");
  set_.text({"--junit", "also write the verdicts as JUnit XML to this file"}, req_.junit, "FILE");
  add_metrics(set_, req_.metrics, kMetricsHelp);
}

AcceptRequest AcceptCommand::finish() {
  req_.rules = acceptance_rules(rules_file_, min_busbw_, "--rules");
  if (req_.rules.empty()) fail(ExitCode::usage, "accept: give --rules FILE.yaml, --min-busbw GBPS or both");
  return req_;
}

ExportCommand::ExportCommand(CLI::App& app)
    : sub_(app.add_subcommand("export",
                              "write results as metrics for Prometheus (node_exporter's textfile "
                              "collector)")),
      set_(*sub_) {
  set_.texts({"runs", "results.csv or links.csv files, or results folders"}, req_.runs, "PATH", 1, -1)->required();
  set_.choice({"--format", "the metrics' format: the Prometheus text format, which OpenMetrics parsers read too"},
              req_.format, {"openmetrics"});
  add_metrics(set_, req_.metrics, "write to FILE.prom (replaced atomically) instead of stdout");
}

HistoryCommand::HistoryCommand(CLI::App& app)
    : sub_(app.add_subcommand("history", "list the runs of a history, or a case's trend")), set_(*sub_) {
  const SelectVocabulary known = rule_vocabulary();
  add_db(set_, req_.db, "the history: an SQLite file, or a PostgreSQL URL (postgresql://...)");
  set_.text({"--host", "only this host's runs"}, req_.filter.host, "HOST");
  add_filter(set_, {"--collective", "trend of this collective"}, req_.filter.collective, known.keys.at("collective"));
  add_filter(set_, {"--impl", "trend of this implementation"}, req_.filter.impl, known.keys.at("impl"));
  add_filter(set_, {"--transport", "trend over this transport (as the transport column says it)"},
             req_.filter.transport, known.keys.at("transport"));
  add_filter(set_, {"--dtype", "trend of this data type"}, req_.filter.dtype, known.keys.at("dtype"));
  set_.size({"--size", "trend at this size"}, req_.filter.bytes, 1);
  set_.texts({"--add", "store these results folders or files (runs made without --db; repeatable)"}, req_.add, "PATH",
             1, -1);
}

HistoryRequest HistoryCommand::finish() {
  req_.db = history_path(req_.db);
  if (req_.db.empty()) fail(ExitCode::usage, "history: give --db FILE or set CCBENCH_DB");
  return req_;
}

}  // namespace ccbench
