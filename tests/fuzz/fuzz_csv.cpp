// libFuzzer target: the CSV reader and the run record (results/csv_reader.h, results/record.h).
// Properties: bad text is Error(usage); every row has as many fields as the header; a header and
// row written by csv_line read back the same; a record read from a row writes the same fields
// after one more write-read trip.
#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

#include "results/csv_reader.h"
#include "results/record.h"
#include "tests/fuzz/fuzz_check.h"

using namespace ccbench;
using fuzz::require;

namespace {

std::vector<std::string> csv_headers() {
  std::vector<std::string> h;
  for (const Column& c : record_columns()) h.push_back(c.csv_header);
  return h;
}

// Whether csv_line's text of `header` starts a line parse_csv treats as its header (not a
// comment or a byte-order mark before it).
bool writable_header(const std::vector<std::string>& header) {
  const std::string& f = header.front();
  return !(f.size() > 0 && f[0] == '#') && f.rfind("\xEF\xBB\xBF", 0) != 0;
}

bool is_whole_number_column(const std::string& h) {
  for (const char* c : {"root", "size[B]", "count[elements]", "ranks", "ranks_per_node", "nodes", "warmup",
                        "iterations", "wrong[elements]"})
    if (h == c) return true;
  return false;
}

std::size_t column_index(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  return header.size();
}

// "0", "-12", "345": what a number prints as; not "007", "+1", "-0" or 30 digits.
bool canonical_integer(const std::string& s) {
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && end == s.data() + s.size()) return std::to_string(v) == s;
  unsigned long long u = 0;
  auto [end2, ec2] = std::from_chars(s.data(), s.data() + s.size(), u);
  return ec2 == std::errc() && end2 == s.data() + s.size() && std::to_string(u) == s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  CsvTable t;
  try {
    t = parse_csv(text);
  } catch (const Error& e) {
    fuzz::require_usage(e);
    return 0;
  }
  require(!t.header.empty(), "a table without header fields");
  require(t.rows.size() == t.row_lines.size(), "rows and their line numbers differ in count");
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    require(t.rows[i].size() == t.header.size(), "a row with a field count other than the header's");
    // Non-decreasing: a bare CR ends a row (libcsv) without starting a new '\n' line.
    require(i == 0 || t.row_lines[i] >= t.row_lines[i - 1], "row line numbers go down");
  }
  static const std::vector<std::string> headers = csv_headers();
  for (std::size_t i = 0; i < t.rows.size() && i < 8; ++i) {
    if (writable_header(t.header)) {  // csv_line -> parse_csv gives back the same fields
      CsvTable back = parse_csv(csv_line(t.header) + csv_line(t.rows[i]));
      require(back.header == t.header, "csv_line/parse_csv changed the header");
      require(back.rows.size() == 1 && back.rows[0] == t.rows[i], "csv_line/parse_csv changed a row");
    }
    RunRecord r;
    try {
      r = record_from_csv(t.header, t.rows[i]);
    } catch (const Error& e) {
      fuzz::require_usage(e);
      continue;
    }
    const std::vector<std::string> once = to_csv_fields(r);
    // A whole number written canonically is kept as it is: never wrapped or clamped.
    for (std::size_t k = 0; k < headers.size(); ++k) {
      if (!is_whole_number_column(headers[k])) continue;
      const std::string& in = t.rows[i][column_index(t.header, headers[k])];
      // The old "not checked" mark of the wrong count (-1) reads as not checked, written empty.
      if (headers[k] == "wrong[elements]" && in == "-1") {
        require(once[k].empty(), "the old -1 of wrong[elements] did not read as not checked");
        continue;
      }
      if (canonical_integer(in)) require(once[k] == in, "a whole number changed on reading (wrapped or clamped)");
    }
    const std::vector<std::string> twice = to_csv_fields(record_from_csv(headers, once));
    require(once == twice, "a record does not survive a CSV write-read trip");
  }
  return 0;
}
