#include "results/csv_reader.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <csv.h>

#include "core/error.h"
#include "results/row_check.h"

namespace ccbench {

namespace {

// State shared with libcsv's C callbacks. They must not throw (the exception would unwind
// through C frames), so they record the first error and parse_csv throws it afterwards.
struct ParseState {
  CsvTable table;
  std::vector<std::string> row;
  bool have_header = false;
  std::size_t line = 0;  // line being fed to the parser, 1-based
  std::string error;
};

void on_field(void* data, size_t len, void* user) {
  auto* st = static_cast<ParseState*>(user);
  st->row.emplace_back(data ? static_cast<const char*>(data) : "", data ? len : 0);
}

void on_row_end(int, void* user) {
  auto* st = static_cast<ParseState*>(user);
  if (!st->error.empty()) {
    st->row.clear();
    return;
  }
  if (!st->have_header) {
    st->table.header = std::move(st->row);
    st->have_header = true;
  } else if (st->row.size() != st->table.header.size()) {
    st->error = fmt::format("line {}: the row has {} fields but the header has {}", st->line, st->row.size(),
                            st->table.header.size());
  } else {
    st->table.rows.push_back(std::move(st->row));
    st->table.row_lines.push_back(st->line);
  }
  st->row.clear();
}

// RFC 4180: spaces belong to the field. libcsv trims them from unquoted fields by default.
int no_space(unsigned char) { return 0; }

// Frees the parser however parse_csv leaves.
struct Parser {
  csv_parser p;
  Parser() {
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
      fail(ExitCode::runtime, "cannot set up the CSV parser (out of memory)");
    csv_set_space_func(&p, no_space);
  }
  ~Parser() { csv_free(&p); }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;
};

bool is_preamble_line(std::string_view l) {
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l.empty() || l.front() == '#';
}

}  // namespace

CsvTable parse_csv(const std::string& text) {
  ParseState st;
  Parser parser;
  std::string_view rest(text);
  if (rest.substr(0, 3) == "\xEF\xBB\xBF") rest.remove_prefix(3);  // UTF-8 BOM, as spreadsheets write

  // Comment and blank lines before the header are not CSV: leave them out before libcsv sees
  // the text. Then feed one line at a time so that every callback knows its line number.
  bool in_preamble = true;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view l = rest.substr(0, nl == std::string_view::npos ? rest.size() : nl + 1);
    rest.remove_prefix(l.size());
    ++st.line;
    if (in_preamble && is_preamble_line(l.substr(0, l.size() - (l.back() == '\n' ? 1 : 0)))) continue;
    in_preamble = false;
    if (csv_parse(&parser.p, l.data(), l.size(), on_field, on_row_end, &st) != l.size())
      fail(ExitCode::usage,
           "line {}: malformed CSV ({}): a field holding a quote must be quoted as a whole, its quotes doubled",
           st.line, csv_strerror(csv_error(&parser.p)));
    if (!st.error.empty()) fail(ExitCode::usage, "{}", st.error);
  }
  if (csv_fini(&parser.p, on_field, on_row_end, &st) != 0)
    fail(ExitCode::usage, "line {}: malformed CSV ({}): a quoted field is not closed", st.line,
         csv_strerror(csv_error(&parser.p)));
  if (!st.error.empty()) fail(ExitCode::usage, "{}", st.error);
  if (!st.have_header) fail(ExitCode::usage, "the CSV has no header line (the file is empty or only comments)");
  return std::move(st.table);
}

namespace {

std::string read_text(const std::string& path) {
  if (std::filesystem::is_directory(path)) fail(ExitCode::usage, "cannot read {}: it is a folder, not a file", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ExitCode::usage, "cannot read {}: {}", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail(ExitCode::usage, "cannot read {}: {}", path, std::strerror(errno));
  return text.str();
}

CsvTable parse_file_text(const std::string& text, const std::string& path) {
  try {
    return parse_csv(text);
  } catch (const Error& e) {
    throw e.with_context(path);
  }
}

std::vector<RunRecord> records_of(const CsvTable& t, const std::string& path) {
  // Every column up front: a file without rows must still be a results.csv.
  for (const Column& c : record_columns())
    if (!c.optional && std::find(t.header.begin(), t.header.end(), c.csv_header) == t.header.end())
      fail(ExitCode::usage, "{}: not a ccbench results.csv: its header has no column '{}'", path, c.csv_header);
  std::vector<RunRecord> out;
  out.reserve(t.rows.size());
  for (size_t i = 0; i < t.rows.size(); ++i) {
    try {
      out.push_back(record_from_csv(t.header, t.rows[i]));
    } catch (const Error& e) {
      throw e.with_context(fmt::format("{}: line {}", path, t.row_lines[i]));
    }
  }
  if (std::find(t.header.begin(), t.header.end(), "cycle") == t.header.end()) number_cycles(out);
  return out;
}

// The schema version the '#' lines before the header state ("# ccbench results, schema_version
// 3"), checked; a CSV without one (another program's) is judged by its header alone.
void check_preamble_schema(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  std::string line;
  const std::string mark = "schema_version ";
  for (size_t n = 1; std::getline(in, line) && (line.empty() || line[0] == '#'); ++n) {
    const size_t at = line.find(mark);
    if (at == std::string::npos) continue;
    const std::string v = line.substr(at + mark.size());
    long long version = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), version);
    if (ec != std::errc() || (end != v.data() + v.size() && *end != '\r'))
      fail(ExitCode::usage, "{}:{}: '{}' does not give a schema version number", path, n, line);
    check_schema_version(version, fmt::format("{}:{}", path, n));
  }
}

// The context a results.csv carries in its '#' lines (run.json has the full one).
Json preamble_context(const std::string& text) {
  Json c = Json::object();
  std::istringstream in(text);
  std::string line;
  const std::string command = "# command: ";
  while (std::getline(in, line) && (line.empty() || line[0] == '#'))
    if (line.rfind(command, 0) == 0) c["command_line"] = line.substr(command.size());
  return c;
}

// run.json beside a results.csv: its context and the run's outcome.
void read_run_json(const std::filesystem::path& run_json, ResultSet& set) {
  std::ifstream in(run_json);
  Json doc;
  try {
    doc = Json::parse(in);
  } catch (const Json::exception& e) {
    fail(ExitCode::usage, "{}: not valid JSON ({}); move it away to read the CSV alone", run_json.string(), e.what());
  }
  if (!doc.is_object()) fail(ExitCode::usage, "{}: not a ccbench run.json (not a JSON object)", run_json.string());
  if (const Json& v = doc.value("schema_version", Json()); !v.is_null()) {
    if (!v.is_number_integer())
      fail(ExitCode::usage, "{}: schema_version {} is not a version number", run_json.string(), v.dump());
    check_schema_version(v.get<long long>(), run_json.string());
  }
  if (doc.contains("context") && doc["context"].is_object()) set.context = doc["context"];
  const Json& code = doc.value("exit_code", Json());
  const Json& verdict = doc.value("verdict", Json());
  if (code.is_number_integer()) set.exit_code = code.get<int>();
  if (verdict.is_string()) set.verdict = verdict.get<std::string>();
  if (set.exit_code && !set.verdict.empty()) return;
  const Json& why = doc.value("incomplete_reason", Json());
  set.outcome_note = fmt::format("{} holds no verdict{}", run_json.string(),
                                 why.is_string() ? " (" + why.get<std::string>() + ")" : "");
}

}  // namespace

CsvTable read_csv_file(const std::string& path) { return parse_file_text(read_text(path), path); }

std::vector<RunRecord> read_results_csv(const std::string& path) {
  const std::string text = read_text(path);
  check_preamble_schema(text, path);
  return records_of(parse_file_text(text, path), path);
}

ResultSet read_result_set(const std::string& file_or_folder) {
  namespace fs = std::filesystem;
  ResultSet set;
  set.csv_path = file_or_folder;
  if (fs::is_directory(file_or_folder)) {
    set.csv_path = (fs::path(file_or_folder) / "results.csv").string();
    if (!fs::exists(set.csv_path))
      fail(ExitCode::usage, "{} is a folder without results.csv: give a results.csv or a ccbench results folder",
           file_or_folder);
  }
  const std::string text = read_text(set.csv_path);
  check_preamble_schema(text, set.csv_path);
  const CsvTable t = parse_file_text(text, set.csv_path);
  set.rows = records_of(t, set.csv_path);
  set.lines = t.row_lines;
  std::set<std::string> known;
  for (const Column& c : record_columns()) known.insert(c.csv_header);
  for (const auto& row : t.rows) {
    auto& extra = set.extra.emplace_back();
    for (size_t i = 0; i < t.header.size(); ++i)
      if (!known.count(t.header[i])) extra[t.header[i]] = row[i];
  }
  const fs::path run_json = fs::path(set.csv_path).parent_path() / "run.json";
  if (fs::exists(run_json)) {
    read_run_json(run_json, set);
  } else {
    set.context = preamble_context(text);
    set.outcome_note = fmt::format("no run.json beside {}", set.csv_path);
  }
  return set;
}

std::string ResultSet::where(std::size_t i) const {
  if (csv_path.empty()) return fmt::format("row {}", i + 1);
  return i < lines.size() ? fmt::format("{}:{}", csv_path, lines[i]) : csv_path;
}

std::string ResultSet::damage(std::size_t i) const { return row_damage(rows.at(i)); }

std::vector<std::string> damaged_rows(const ResultSet& set) {
  std::vector<std::string> out;
  for (size_t i = 0; i < set.rows.size(); ++i)
    if (std::string d = set.damage(i); !d.empty()) out.push_back(fmt::format("{}: {}", set.where(i), d));
  return out;
}

std::string csv_line(const std::vector<std::string>& fields) {
  if (fields.size() == 1 && fields[0].empty()) return "\"\"\n";  // a bare empty line is no row
  std::string s;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) s += ',';
    const std::string& f = fields[i];
    if (f.find_first_of(",\"\r\n") == std::string::npos) {
      s += f;
      continue;
    }
    s += '"';
    for (char c : f) {
      if (c == '"') s += '"';
      s += c;
    }
    s += '"';
  }
  s += '\n';
  return s;
}

}  // namespace ccbench
