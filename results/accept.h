#pragma once
// Acceptance: rules (YAML) that select result rows and state what they must reach; a verdict
// per rule and check with the rows that broke it, per node and per link where the rows identify
// them, overall pass/fail, as text and as JUnit XML. No I/O but reading the rules file.
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/attribution.h"
#include "results/csv_reader.h"

namespace ccbench {

// The columns a check reads; one that needs a column is "not available" on rows without it.
// ccbench writes the first two where a run has link ceilings or a model (results/record.h).
inline constexpr const char* kCeilingColumn = kLinkCeilingHeader;          // measured link ceiling
inline constexpr const char* kPredictionColumn = kPredictedBusbwHeader;    // the model's prediction
inline constexpr const char* kStragglerColumn = "straggler_ratio";         // slowest rank / median rank time
inline constexpr const char* kGroupOutlierColumn = "group_outlier_ratio";  // slowest group / median group
inline constexpr const char* kTemperatureColumn = "gpu_temp_max[C]";
inline constexpr const char* kThrottleColumn = "throttle_events";          // ccbench rows: their health (telemetry/)
inline constexpr const char* kErrorGrowthColumn = "error_counter_growth";  // likewise
inline constexpr const char* kEnergyColumn = kEnergyHeader;                // --energy: J per collective
inline constexpr const char* kEnergyEfficiencyColumn = kEnergyEfficiencyHeader;  // --energy: GB per J
inline constexpr const char* kHostColumn = "host";                               // which node measured the row
inline constexpr const char* kLinkColumn = "link";  // which link the row measured ("gpu0-gpu1", "node01-node02")

// Which rows a rule is about: every given field must match (a list matches any of its values).
struct RowSelector {
  std::vector<std::string> collective, impl, transport, dtype, op, mode, group;
  std::uint64_t min_bytes = 0, max_bytes = std::numeric_limits<std::uint64_t>::max();
  bool matches(const RunRecord& r) const;
};

// What the selected rows must reach; unset limits are not checked.
struct Requirement {
  std::optional<double> min_busbw_gbps, min_fraction_of_ceiling, min_fraction_of_prediction, max_latency_us,
      max_time_cv, max_p95_over_median, max_wrong, max_straggler_ratio, max_group_outlier_ratio, max_temperature_c,
      max_throttle_events, max_error_counter_growth, max_energy_j, min_gb_per_joule;
};

struct Rule {
  std::string name;
  std::string where;  // "FILE:LINE" of the rule, or "--min-busbw"
  RowSelector select;
  Requirement require;
};

// The values `select` may name, per key ("collective", "impl", "transport", "dtype", "op",
// "mode"). results/ does not know these vocabularies: the command line gives them. A key without
// an entry takes any value (group names are made by each run).
struct SelectVocabulary {
  struct Known {
    std::vector<std::string> names;  // the valid names, as messages list and suggest them
    // The spelling rows carry for a value (an alias resolved), or nullopt for an unknown one;
    // null: exactly `names`.
    std::function<std::optional<std::string>(const std::string&)> canonical;
  };
  std::map<std::string, Known> keys;
};

// Reads a rules file. Throws Error(usage) naming the file, the line and what is expected: bad
// YAML, unknown keys (named, with the valid ones and the closest), values of the wrong kind, an
// empty rule list, and a `select` value `known` does not know (it could only ever select nothing).
std::vector<Rule> load_rules(const std::string& path, const std::string& flag = "--rules",  // flag: for messages
                             const SelectVocabulary& known = {});
std::vector<Rule> parse_rules(const std::string& yaml_text, const std::string& file_name,
                              const SelectVocabulary& known = {});
// --min-busbw GBPS: every ok row of at least kMinBusbwFromBytes must reach `gbps` (as
// NCCL_TESTS_MIN_BW, which nccl-tests checks on the largest sizes).
Rule min_busbw_rule(double gbps);
inline constexpr std::uint64_t kMinBusbwFromBytes = 1 << 20;  // below 1 MiB busbw is latency, not bandwidth

enum class CheckState { pass, fail, not_available };

struct CheckVerdict {
  std::string check;  // "min_busbw 300 GB/s"
  CheckState state = CheckState::pass;
  std::string note;                 // why not available
  std::vector<std::string> broken;  // each row that broke it: its case, size, value
};

struct RuleVerdict {
  const Rule* rule = nullptr;
  int rows = 0;  // measured rows selected (skipped rows, cases that cannot run there, are not checked)
  std::vector<CheckVerdict> checks;
  bool failed() const;
  // FAIL when a check failed; else N/A when a check could not be judged (a rule that needs data
  // the rows do not carry, such as max_wrong over unchecked rows, is never PASS); else PASS.
  CheckState state() const;
};

struct PlaceVerdict {  // a node or a link
  std::string name;
  CheckState state = CheckState::pass;
  int failed_rows = 0, rows = 0;
  std::string note;
};

// Rows listed under a failed check, in the text and in JUnit; the rest are counted ("... and 189
// more rows"): a whole node failing a bandwidth floor lists every size of every case otherwise.
inline constexpr std::size_t kBrokenRowsListed = 10;

struct AcceptReport {
  std::vector<RuleVerdict> rules;
  std::vector<PlaceVerdict> nodes, links;  // one entry "(all)" with a note when not available
  // The link verdicts put on the endpoints they share (results/attribution.h, by verdict), where
  // links between ranks were judged; the per-node verdict then counts a failing link's rows
  // against the culprit it is put on, not against the host that sent them (none for a link
  // at fault itself).
  std::optional<Attribution> attribution;
  bool passed = true;        // no rule failed (exit code 0); the text says N/A, not PASS, where one was not judged
  std::string text() const;  // for people
  std::string junit_xml(const std::string& suite_name) const;  // JUnit XML for CI systems
};

// Checks every rule on the rows of every result set, then puts the failing links on their
// culprit endpoints (AcceptReport::attribution). A selected row with impossible values
// (results/row_check.h), or a foreign column's figure that is not a finite number of zero or
// more, breaks every check over it, "DAMAGED, not judged (FILE:LINE: what)": never a pass.
AcceptReport evaluate_rules(const std::vector<Rule>& rules, const std::vector<ResultSet>& runs);

// Which node measured row i of `set`: its 'host' column, or the one host of a single-node run;
// nullopt when neither says. Acceptance and the metrics name nodes by it.
std::optional<std::string> row_host(const ResultSet& set, size_t i);
// Which link row i of `set` measured: its 'link' column; nullopt when it has none.
std::optional<std::string> row_link(const ResultSet& set, size_t i);

}  // namespace ccbench
