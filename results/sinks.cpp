#include "results/sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "core/error.h"
#include "core/size.h"
#include "results/csv_reader.h"
#include "results/format.h"
#include "results/row_check.h"
#include "results/row_key.h"

namespace ccbench {

ExitCode write_error_code(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EIO:
    case EFBIG: return ExitCode::runtime;
    default: return ExitCode::usage;
  }
}

namespace {

// Writes all of `text` through a new descriptor of `path` opened with `flags` (and truncated to
// the text's length); 0 or the errno of what failed.
int write_whole(const std::string& path, const std::string& text, int flags) {
  const int fd = open(path.c_str(), flags | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) return errno;
  int err = 0;
  for (size_t done = 0; done < text.size() && err == 0;) {
    const ssize_t n = pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n > 0) done += static_cast<size_t>(n);
    else if (n == 0) err = EIO;
    else if (errno != EINTR) err = errno;
  }
  if (err == 0 && ftruncate(fd, static_cast<off_t>(text.size())) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  return err;
}

[[noreturn]] void fail_write(const std::string& path, int err) {
  fail(write_error_code(err), "cannot write {}: {}", path, std::strerror(err));
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  int err = write_whole(tmp, text, O_CREAT | O_TRUNC);
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    unlink(tmp.c_str());  // never rmdir: a folder of that name is someone else's
    fail_write(path, err);
  }
}

// Every sink gets every call even when one of them throws; the first error is rethrown after.
namespace {
template <typename F>
void for_each_sink(std::vector<std::unique_ptr<ResultSink>>& sinks, F&& call) {
  std::exception_ptr first;
  for (auto& s : sinks) {
    try {
      call(*s);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}
}  // namespace

void FanoutSink::begin(const Json& context) {
  for_each_sink(sinks_, [&](ResultSink& s) { s.begin(context); });
}
void FanoutSink::add(const RunRecord& row) {
  const RunRecord written = sealed(row);
  for_each_sink(sinks_, [&](ResultSink& s) { s.add(written); });
}

void FanoutSink::finish(const RunOutcome& outcome) {
  for_each_sink(sinks_, [&](ResultSink& s) { s.finish(outcome); });
}
void FanoutSink::revise(const std::vector<RunRecord>& rows) {
  std::vector<RunRecord> written;
  written.reserve(rows.size());
  for (const RunRecord& r : rows) written.push_back(sealed(r));
  for_each_sink(sinks_, [&](ResultSink& s) { s.revise(written); });
}

namespace {

std::string verdict_of(const RunOutcome& o) {
  if (!o.verdict.empty()) return o.verdict;
  if (o.exit_code == 0) return "OK";
  return fmt::format("FAILED (exit code {}: {})", o.exit_code, exit_code_name(static_cast<ExitCode>(o.exit_code)));
}

std::string rtrim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// ---------------------------------------------------------------------------------------------
// Table on stdout, nccl-tests layout with a p50 column added to each side.
// ---------------------------------------------------------------------------------------------

// Column widths: the five leading columns as nccl-tests; each side holds time, p50, algbw,
// busbw, #wrong. Times get 9 characters so that 2 decimals fit up to 999999.99 us.
constexpr const char* kSideFmt = "  {:>9}  {:>9}  {:>7}  {:>7}  {:>6}";
constexpr int kSideWidth = 2 + 9 + 2 + 9 + 2 + 7 + 2 + 7 + 2 + 6;
constexpr int kLeadWidth = 12 + 2 + 12 + 2 + 8 + 2 + 6 + 2 + 6;

std::string centered(const std::string& s, int width) {
  const int pad = width - static_cast<int>(s.size());
  if (pad <= 0) return s;
  return std::string(pad - pad / 2, ' ') + s + std::string(pad / 2, ' ');
}

// The table's footer, computed from the rows above it so that the two cannot disagree. Rows
// whose data was not checked add nothing to the wrong count: they are counted apart. The average
// bus bandwidth is per case (as the table's titles), never mixed across cases.
class Footer {
 public:
  void add(const RunRecord& r) {
    if (r.dtype.empty()) return;  // an implementation that cannot run here at all: no case to average
    const RowKey key = case_key(r);
    auto c = std::find_if(cases_.begin(), cases_.end(), [&](const CaseBw& x) { return x.key == key; });
    if (c == cases_.end()) c = cases_.insert(cases_.end(), CaseBw{key, case_label(r)});
    if (!row_measured(r)) return;
    c->sum += r.busbw_gbps;
    ++c->n;
    if (r.wrong) {
      wrong_ += *r.wrong;
      ++checked_;
    } else {
      ++unchecked_;
    }
  }

  std::vector<std::string> lines(const RunOutcome& o) const {
    std::vector<std::string> out{wrong_line()};
    if (cases_.size() <= 1) {
      out.push_back(fmt::format("# Avg bus bandwidth    : {}", cases_.empty() ? "-" : average(cases_.front())));
    } else {
      out.push_back("# Avg bus bandwidth    : per case");
      size_t width = 0;
      for (const CaseBw& c : cases_) width = std::max(width, c.label.size());
      for (const CaseBw& c : cases_) out.push_back(fmt::format("#   {:<{}} : {}", c.label, width, average(c)));
    }
    out.push_back(fmt::format("# Result: {}", verdict_of(o)));
    if (!o.complete) out.push_back(fmt::format("# Incomplete: {}", single_line(o.reason)));
    return out;
  }

 private:
  struct CaseBw {
    RowKey key;
    std::string label;
    double sum = 0;
    int n = 0;
  };
  static std::string average(const CaseBw& c) { return c.n ? fmt::format("{:g}", c.sum / c.n) : "-"; }

  // "0 OK", "3 FAILED", with the rows not checked named apart; N/A when no row was checked.
  std::string wrong_line() const {
    std::string s = checked_ ? fmt::format("{} {}", wrong_, wrong_ == 0 ? "OK" : "FAILED") : "N/A";
    if (unchecked_) s += fmt::format(" ({} row{} not checked)", unchecked_, unchecked_ == 1 ? "" : "s");
    return "# Out of bounds values : " + s;
  }

  std::int64_t wrong_ = 0;
  int checked_ = 0, unchecked_ = 0;
  std::vector<CaseBw> cases_;
};

class TableSink : public ResultSink {
 public:
  explicit TableSink(std::ostream& out) : out_(out) {}

  void begin(const Json&) override {}

  void add(const RunRecord& r) override {
    footer_.add(r);
    if (held_) {
      if (r.in_place && case_key(*held_) == case_key(r) && held_->bytes == r.bytes && held_->count == r.count) {
        print_row(&*held_, &r);
        held_.reset();
        return;
      }
      print_row(&*held_, nullptr);
      held_.reset();
    }
    start_case(r);
    if (!r.in_place) held_ = r;  // printed when its in-place twin (or any other row) arrives
    else print_row(nullptr, &r);
  }

  void finish(const RunOutcome& o) override {
    if (held_) {
      print_row(&*held_, nullptr);
      held_.reset();
    }
    for (const std::string& l : footer_.lines(o)) line(l);
  }

 private:
  void line(const std::string& s) {
    out_ << rtrim(s) << '\n';
    out_.flush();  // a watchdog or crash must not eat rows already measured
  }

  // A new case gets its title and the column headers.
  void start_case(const RunRecord& r) {
    const RowKey key = case_key(r);
    if (key == current_case_) return;
    current_case_ = key;
    // GPU cases say what ran at each size (NCCL's algorithm/protocol, our kernel and channels).
    show_algorithm_ = r.device == "gpu" || !r.algorithm.empty();
    const char* algo_head = show_algorithm_ ? "  algorithm" : "";
    line("#");
    line("# " + case_title(r));
    line("# " + std::string(kLeadWidth - 2, ' ') + "  " + centered("out-of-place", kSideWidth - 2) + "  " +
         centered("in-place", kSideWidth - 2));
    line(fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}", "size", "count", "type", "redop", "root") +
         fmt::format(kSideFmt, "time", "p50", "algbw", "busbw", "#wrong") +
         fmt::format(kSideFmt, "time", "p50", "algbw", "busbw", "#wrong") + algo_head);
    line(fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}", "(B)", "(elements)", "", "", "") +
         fmt::format(kSideFmt, "(us)", "(us)", "(GB/s)", "(GB/s)", "") +
         fmt::format(kSideFmt, "(us)", "(us)", "(GB/s)", "(GB/s)", ""));
  }

  static std::string side(const RunRecord* r) {
    if (!r || !row_measured(*r)) return fmt::format(kSideFmt, "-", "-", "-", "-", "-");
    return fmt::format(kSideFmt, fmt::format("{:.2f}", r->time_avg_us), fmt::format("{:.2f}", r->time_median_us),
                       fmt::format("{:.2f}", r->algbw_gbps), fmt::format("{:.2f}", r->busbw_gbps), wrong_text(*r));
  }

  // The two sides' algorithm, once when they agree.
  static std::string algorithm_text(const RunRecord* oop, const RunRecord* ip) {
    const std::string a = oop ? oop->algorithm : "", b = ip ? ip->algorithm : "";
    if (a.empty() || b.empty() || a == b) return a.empty() ? b : a;
    return a + " | " + b;
  }

  static std::string status_text(const RunRecord& r) {
    if (r.reason.empty()) return std::string(row_status_name(r.status));
    return fmt::format("{}: {}", row_status_name(r.status), single_line(r.reason));
  }

  void print_row(const RunRecord* oop, const RunRecord* ip) {
    const RunRecord& any = oop ? *oop : *ip;
    const std::string lead =
        fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", any.bytes, any.count, any.dtype, any.op, any.root);
    // Neither side measured for the same reason (the usual skip): one text line.
    const bool oop_text = oop && !row_measured(*oop), ip_text = ip && !row_measured(*ip);
    if ((oop_text || !oop) && (ip_text || !ip) &&
        (!oop || !ip || (oop->status == ip->status && oop->reason == ip->reason))) {
      line(lead + "  " + status_text(any));
      return;
    }
    line(lead + side(oop) + side(ip) + (show_algorithm_ ? "  " + algorithm_text(oop, ip) : ""));
    // What a number cannot say: why a side is missing, and the first wrong element.
    for (auto [r, name] : {std::pair{oop, "out-of-place"}, std::pair{ip, "in-place"}}) {
      if (r && (!row_measured(*r) || (r->status == RowStatus::wrong && !r->reason.empty())))
        line(fmt::format("#   {} {}", name, status_text(*r)));
    }
  }

  std::ostream& out_;
  RowKey current_case_;
  bool show_algorithm_ = false;
  std::optional<RunRecord> held_;
  Footer footer_;
};

// The footer alone, for runs whose table is not printed: the verdict is on stdout whatever
// --format says.
class FooterSink : public ResultSink {
 public:
  explicit FooterSink(std::ostream& out) : out_(out) {}
  void begin(const Json&) override {}
  void add(const RunRecord& r) override { footer_.add(r); }
  void finish(const RunOutcome& o) override {
    for (const std::string& l : footer_.lines(o)) out_ << rtrim(l) << '\n';
    out_.flush();
  }

 private:
  std::ostream& out_;
  Footer footer_;
};

// ---------------------------------------------------------------------------------------------
// results.csv
// ---------------------------------------------------------------------------------------------

// context["command_line"]: a string as given, or an argument vector joined for a shell.
std::string command_line_of(const Json& context) {
  if (!context.is_object() || !context.contains("command_line")) return {};
  const Json& c = context["command_line"];
  if (c.is_string()) return c.get<std::string>();
  if (c.is_array()) {
    std::string s;
    for (const Json& a : c) {
      if (!s.empty()) s += ' ';
      s += shell_quoted(a.is_string() ? a.get<std::string>() : a.dump());
    }
    return s;
  }
  return c.dump();
}

// Where the ceiling and model columns come from (the context's link_ceilings and model), as '#'
// lines; "" for a run without them.
std::string references_of(const Json& context) {
  std::string s;
  if (!context.is_object()) return s;
  if (const auto c = context.find("link_ceilings"); c != context.end() && c->is_object())
    s += fmt::format("# link ceilings: {}\n", single_line(c->value("source", "")));
  if (const auto m = context.find("model"); m != context.end() && m->is_object())
    s += fmt::format("# model: {} ({})\n", single_line(m->value("topology", "")), single_line(m->value("file", "")));
  return s;
}

class CsvSink : public ResultSink {
 public:
  explicit CsvSink(std::string path) : path_(std::move(path)) {
    out_.open(path_, std::ios::out | std::ios::trunc | std::ios::binary);
    if (!out_) fail_write(path_, errno);
  }

  void begin(const Json& context) override {
    preamble_ = fmt::format("# ccbench results, schema_version {}\n", kSchemaVersion);
    const std::string cmd = command_line_of(context);
    if (!cmd.empty()) preamble_ += fmt::format("# command: {}\n", single_line(cmd));
    preamble_ += references_of(context);
    write(preamble_);
    write_header();
  }

  void add(const RunRecord& r) override {
    write_header();
    write(csv_line(to_csv_fields(r)));
  }

  // The CSV stays a plain table; how the run ended is in run.json and the table footer.
  void finish(const RunOutcome&) override { out_.flush(); }

  // The whole file again through a temporary file, then appending goes on after it.
  void revise(const std::vector<RunRecord>& rows) override {
    std::string text = preamble_ + csv_line(header());
    for (const RunRecord& r : rows) text += csv_line(to_csv_fields(r));
    out_.close();
    write_file_atomically(path_, text);
    written_ = text.size();
    out_.open(path_, std::ios::out | std::ios::app | std::ios::binary);
    if (!out_) fail_write(path_, errno);
    header_written_ = true;
  }

 private:
  static std::vector<std::string> header() {
    std::vector<std::string> h;
    for (const Column& c : record_columns()) h.push_back(c.csv_header);
    return h;
  }
  void write_header() {
    if (header_written_) return;
    write(csv_line(header()));
    header_written_ = true;
  }

  // One row (or the preamble) at a time: what a failed write left of it is cut off again, so
  // that readers find whole rows only.
  void write(const std::string& text) {
    out_ << text;
    out_.flush();
    if (!out_) {
      const int err = errno ? errno : EIO;
      out_.close();
      truncate(path_.c_str(), static_cast<off_t>(written_));
      fail_write(path_, err);
    }
    written_ += text.size();
  }

  std::string path_;
  std::ofstream out_;
  size_t written_ = 0;    // bytes of whole rows in the file
  std::string preamble_;  // the '#' context lines
  bool header_written_ = false;
};

// ---------------------------------------------------------------------------------------------
// run.json
// ---------------------------------------------------------------------------------------------

std::string dump_json(const Json& j) {
  // Invalid UTF-8 in a host name or reason must not cost the whole file.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

// Whole-file writers rewrite their file as rows arrive; with thousands of rows that costs more
// than measuring (1.5 ms a row at 1000 rows). The pacer skips a rewrite while rewriting has taken
// more than 5% of the run's time (plus 50 ms), but never leaves the file more than 2 s behind;
// finish() always writes, and results.csv has every row at once.
class WritePacer {
 public:
  bool due() const {
    const auto now = Clock::now();
    const double run = std::chrono::duration<double>(now - start_).count();
    // 50 ms of writing are always allowed: short runs and the first rows are never held back.
    return spent_ <= 0.05 + 0.05 * run || now - last_ >= std::chrono::seconds(2);
  }
  template <typename F>
  void write(F&& f) {
    const auto t0 = Clock::now();
    f();
    last_ = Clock::now();
    spent_ += std::chrono::duration<double>(last_ - t0).count();
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now(), last_ = Clock::now();
  double spent_ = 0;
};

class JsonSink : public ResultSink {
 public:
  explicit JsonSink(std::string path) : path_(std::move(path)) {
    doc_["schema_version"] = kSchemaVersion;
    doc_["complete"] = false;
    doc_["incomplete_reason"] = kRunningReason;
    doc_["exit_code"] = nullptr;
    doc_["verdict"] = nullptr;
    doc_["context"] = Json::object();
    doc_["rows"] = Json::array();
    write();  // fails here, before any measurement, when the path is not writable
  }

  void begin(const Json& context) override {
    doc_["context"] = context;
    write();
  }
  void add(const RunRecord& r) override {
    doc_["rows"].push_back(to_json(r));
    if (pacer_.due()) write();
  }
  void revise(const std::vector<RunRecord>& rows) override {
    doc_["rows"] = Json::array();
    for (const RunRecord& r : rows) doc_["rows"].push_back(to_json(r));
    write();
  }
  void finish(const RunOutcome& o) override {
    doc_["complete"] = o.complete;
    doc_["incomplete_reason"] = o.complete ? Json(nullptr) : Json(o.reason);
    doc_["exit_code"] = o.exit_code;
    doc_["verdict"] = verdict_of(o);
    if (!o.health.is_null()) doc_["context"]["telemetry"]["run_summary"] = o.health;
    if (o.context_added.is_object())
      for (const auto& [key, value] : o.context_added.items()) doc_["context"][key] = value;
    try {
      write();
    } catch (const Error& e) {
      // A full disk has no room for a second copy, but the file's own blocks can take the
      // outcome: rewritten in place without indentation, it is smaller than the running file.
      if (e.code() != ExitCode::runtime ||
          write_whole(path_, doc_.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n", 0) != 0)
        throw;
    }
  }

 private:
  void write() {
    pacer_.write([&] { write_file_atomically(path_, dump_json(doc_)); });
  }

  std::string path_;
  Json doc_ = Json::object();
  WritePacer pacer_;
};

// ---------------------------------------------------------------------------------------------
// results.md
// ---------------------------------------------------------------------------------------------

// A value in a code span; the fence is longer than any run of backticks inside.
std::string code(const std::string& s) {
  size_t longest = 0, run = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !s.empty() && (s.front() == '`' || s.back() == '`');
  return fence + (pad ? " " : "") + single_line(s) + (pad ? " " : "") + fence;
}

std::string scalar_text(const Json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// A table cell: '|' would end the cell and a newline the row.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : single_line(s)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

bool all_scalars(const Json& a) {
  for (const Json& v : a)
    if (v.is_structured()) return false;
  return true;
}

std::string render_context(const Json& context) {
  std::string s;
  if (!context.is_object() || context.empty()) return "No context was recorded.\n";
  for (const auto& [key, v] : context.items()) {
    if (key == "command_line") {
      s += fmt::format("- **{}**: {}\n", key, code(command_line_of(context)));
    } else if (v.is_object()) {
      s += fmt::format("- **{}**:{}\n", key, v.empty() ? " none" : "");
      for (const auto& [k2, v2] : v.items()) s += fmt::format("  - {}: {}\n", k2, code(scalar_text(v2)));
    } else if (v.is_array() && all_scalars(v)) {
      std::string items;
      for (const Json& e : v) items += (items.empty() ? "" : ", ") + code(scalar_text(e));
      s += fmt::format("- **{}**: {}\n", key, v.empty() ? "none" : items);
    } else {
      s += fmt::format("- **{}**: {}\n", key, code(scalar_text(v)));
    }
  }
  return s;
}

class MarkdownSink : public ResultSink {
 public:
  explicit MarkdownSink(std::string path) : path_(std::move(path)) { write(); }

  void begin(const Json& context) override {
    context_ = context;
    write();
  }
  void add(const RunRecord& r) override {
    file_row(r);
    if (pacer_.due()) write();
  }
  void revise(const std::vector<RunRecord>& rows) override {
    cases_.clear();
    for (const RunRecord& r : rows) file_row(r);
    write();
  }
  void finish(const RunOutcome& o) override {
    outcome_ = o;
    write();
  }

 private:
  struct Case {
    RowKey key;
    std::string title;
    std::vector<RunRecord> rows;
  };

  void file_row(const RunRecord& r) {
    const RowKey key = case_key(r);
    size_t i = 0;
    while (i < cases_.size() && cases_[i].key != key) ++i;
    if (i == cases_.size()) cases_.push_back({key, case_label(r), {}});
    cases_[i].rows.push_back(r);
  }

  std::string render() const {
    std::string s = "# ccbench results\n\n";
    if (!outcome_) {
      s += "Status: **running** (this file is rewritten as measurements arrive)\n";
    } else {
      s += fmt::format("Result: **{}** (exit code {})\n", cell(verdict_of(*outcome_)), outcome_->exit_code);
      if (!outcome_->complete) s += fmt::format("\nIncomplete: {}\n", single_line(outcome_->reason));
    }
    s += "\n## Context\n\n" + render_context(context_);
    s += "\n## Results\n";
    if (cases_.empty()) s += "\nNo measurements yet.\n";
    for (const Case& c : cases_) s += render_case(c);
    return s;
  }

  // One table per case; the ceiling and model columns only where a row of the case has them.
  static std::string render_case(const Case& c) {
    auto any = [&c](auto has) { return std::any_of(c.rows.begin(), c.rows.end(), has); };
    const bool ceiling = any([](const RunRecord& r) { return r.link_ceiling_gbps.has_value(); });
    const bool model = any([](const RunRecord& r) { return r.predicted_busbw_gbps.has_value(); });
    std::string s = fmt::format("\n### {}\n\n", c.title);
    s += "| size | count | placement | algorithm | time (us) | p50 (us) | p95 (us) | cv | algbw (GB/s) "
         "| busbw (GB/s) | busbw p50 (GB/s) | #wrong |";
    std::string align = "|---:|---:|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|";
    if (ceiling) s += " ceiling (GB/s) | efficiency |", align += "---:|---:|";
    if (model) s += " predicted busbw (GB/s) | measured / predicted |", align += "---:|---:|";
    s += " status |\n" + align + ":---|\n";
    for (const RunRecord& r : c.rows) {
      const std::string place = r.in_place ? "in-place" : "out-of-place";
      const std::string algorithm = r.algorithm.empty() ? "-" : cell(r.algorithm);
      const std::string status = r.reason.empty() ? std::string(row_status_name(r.status))
                                                  : fmt::format("{}: {}", row_status_name(r.status), cell(r.reason));
      s += fmt::format("| {} | {} | {} | {} | ", human_size(r.bytes), r.count, place, algorithm);
      if (row_measured(r))
        s += fmt::format("{:.2f} | {:.2f} | {:.2f} | {:.1f}% | {:.2f} | {:.2f} | {:.2f} | {} |", r.time_avg_us,
                         r.time_median_us, r.time_p95_us, 100.0 * r.time_cv, r.algbw_gbps, r.busbw_gbps,
                         r.busbw_median_gbps, wrong_text(r));
      else s += "- | - | - | - | - | - | - | - |";
      if (ceiling) s += fmt::format(" {} | {} |", figure(r.link_ceiling_gbps), figure(r.efficiency));
      if (model) s += fmt::format(" {} | {} |", figure(r.predicted_busbw_gbps), figure(r.model_efficiency));
      s += fmt::format(" {} |\n", status);
    }
    return s;
  }

  static std::string figure(const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : "-"; }

  void write() {
    pacer_.write([&] { write_file_atomically(path_, render()); });
  }

  WritePacer pacer_;
  std::string path_;
  Json context_ = Json::object();
  std::vector<Case> cases_;
  std::optional<RunOutcome> outcome_;
};

}  // namespace

std::unique_ptr<ResultSink> make_table_sink(std::ostream& out) { return std::make_unique<TableSink>(out); }
std::unique_ptr<ResultSink> make_footer_sink(std::ostream& out) { return std::make_unique<FooterSink>(out); }
std::unique_ptr<ResultSink> make_csv_sink(const std::string& path) { return std::make_unique<CsvSink>(path); }
std::unique_ptr<ResultSink> make_json_sink(const std::string& path) { return std::make_unique<JsonSink>(path); }
std::unique_ptr<ResultSink> make_markdown_sink(const std::string& path) { return std::make_unique<MarkdownSink>(path); }

}  // namespace ccbench
