#pragma once
// Reads CSV files with libcsv (RFC 4180 quoting). Used by `compare`, `report` and the tests.
#include <cstddef>
#include <map>
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
// Throws Error(usage) naming the file and line of a bad row.
std::vector<RunRecord> read_results_csv(const std::string& path);

// Writes one CSV line (with '\n') of `fields`. A field is quoted, its quotes doubled, when it
// holds a comma, a quote, CR or LF; RFC 4180 keeps every other character (spaces too) as is.
std::string csv_line(const std::vector<std::string>& fields);

// One run's results as `compare`, `accept` and the history read them: a results.csv given as
// the file or as its folder, the columns of the CSV that are not RunRecord's (kept as text per
// row, e.g. link ceilings), and the run context: run.json's "context" when run.json lies beside
// the CSV, else what the CSV's '#' lines say ({"command_line": ...}). Throws Error(usage)
// naming the path when neither a results.csv nor its folder is given.
struct ResultSet {
  std::string csv_path;
  std::vector<RunRecord> rows;
  std::vector<std::map<std::string, std::string>> extra;  // per row: column header -> text
  Json context = Json::object();
};
ResultSet read_result_set(const std::string& file_or_folder);

}  // namespace ccbench
