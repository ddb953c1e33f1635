#pragma once
// Reads CSV files with libcsv (RFC 4180 quoting). Used by `compare`, `report` and the tests.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/record.h"

namespace ccbench {

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> row_lines;  // 1-based line of the text where each row ends, for messages
};

// Parses `text`; lines that start with '#' before the header are comments, blank lines are
// skipped, and a field keeps its spaces (RFC 4180). Every row must have as many fields as the
// header. Throws Error(usage) with the line number on malformed input, and on a text without a
// header line (empty, or comments only).
CsvTable parse_csv(const std::string& text);
// Reads and parses a file; throws Error(usage) naming the file when it cannot be read.
CsvTable read_csv_file(const std::string& path);
// The run records of a results.csv; columns are found by their header, extra columns ignored.
// A file without the cycle column (schema before 4) gets its repeated rows numbered
// (number_cycles()). Throws Error(usage) naming the file and line of a bad row, and of a
// '# ... schema_version N' line naming a version this build does not read.
std::vector<RunRecord> read_results_csv(const std::string& path);

// Writes one CSV line (with '\n') of `fields`. A field is quoted, its quotes doubled, when it
// holds a comma, a quote, CR or LF; RFC 4180 keeps every other character (spaces too) as is.
std::string csv_line(const std::vector<std::string>& fields);

// One run's results as `compare`, `accept` and the history read them: a results.csv given as
// the file or as its folder, the line each row ends on (for messages), the columns of the CSV
// that are not RunRecord's (kept as text per row, e.g. link ceilings), and the run context:
// run.json's "context" when run.json lies beside the CSV, else what the CSV's '#' lines say
// ({"command_line": ...}), with the run's own outcome from run.json (exit code and verdict;
// empty where there is no run.json or the run had not ended). Throws Error(usage) naming the
// path when neither a results.csv nor its folder is given, and when the CSV or run.json states
// a schema_version this build does not read. Rows are read as written: a row
// with impossible values (results/row_check.h) is kept, and every reader checks it with
// damage() before judging it.
struct ResultSet {
  std::string csv_path;
  std::vector<RunRecord> rows;
  std::vector<std::map<std::string, std::string>> extra;  // per row: column header -> text
  Json context = Json::object();
  std::vector<std::size_t> lines = {};  // per row, 1-based; empty for rows that come from no file
  std::optional<int> exit_code = {};    // run.json's, when it has one
  std::string verdict = {};             // run.json's verdict, "" when it has none
  std::string outcome_note = {};        // why there is no verdict: no run.json, or what run.json says instead

  // "FILE:LINE" of row i ("FILE" alone where lines are not known, "row N" for rows of no file).
  std::string where(std::size_t i) const;
  // row_damage() of row i: "" for a sound row.
  std::string damage(std::size_t i) const;
};
// Every damaged row of `set`, "FILE:LINE: what is impossible", in file order.
std::vector<std::string> damaged_rows(const ResultSet& set);
ResultSet read_result_set(const std::string& file_or_folder);

}  // namespace ccbench
