#pragma once
// Where run records go. One record, several reporters (table on stdout, results.csv, run.json,
// results.md); only rank 0 writes. A sink persists each row as it arrives, so a later failure
// loses nothing already measured. Rows reach the sinks complete (every column of
// results/record.h that the run can fill), and nothing writes into a file after finish().
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/exit_code.h"
#include "results/record.h"

namespace ccbench {

// How a run ended, for the footer of every output.
struct RunOutcome {
  bool complete = true;  // false: the sweep stopped early; `reason` says why
  std::string reason;
  int exit_code = 0;
  std::string verdict;    // "OK" or "FAILED: ..." as printed in the table footer
  Json health = nullptr;  // the run's health summary (telemetry/sampler.h); null when not sampled
  // Facts of the context learnt while the run went on (the rings the implementations connected:
  // "ring_neighbours"); run.json's context gets each key. Null when none.
  Json context_added = nullptr;
};

class ResultSink {
 public:
  virtual ~ResultSink() = default;
  // Called once, before any row. `context` is the context block (docs/design.md, "Run records").
  virtual void begin(const Json& context) = 0;
  // One measurement; written (and flushed / atomically replaced) before returning.
  virtual void add(const RunRecord& row) = 0;
  // The row of a measurement that ends the run here (a timeout; the job ends right after). The
  // default is add(); a sub-group run's leader sends it on to rank 0, which ends the run with it.
  virtual void add_last(const RunRecord& row) { add(row); }
  // Called once at the end, also after a failure.
  virtual void finish(const RunOutcome& outcome) = 0;
  // Before finish(): replaces every row added so far by `rows`, the same rows in the order they
  // were added, now with the columns that can only be computed once every row is known (a
  // sub-group run's group_outlier_ratio). The file sinks rewrite their file; what was printed
  // to a terminal stays as printed (the default does nothing).
  virtual void revise(const std::vector<RunRecord>& rows) { (void)rows; }
};

// nccl-tests-style table: each case (collective, impl, transport, device, ranks, dtype, op, mode,
// root, group) gets a '#' title line and the column headers with a units row; out-of-place and
// in-place results of one size share a line (the out-of-place row is held until its in-place twin
// or any other row arrives; a missing side shows '-'). Skipped and failed rows print their reason;
// a row whose data was not checked shows N/A under #wrong. The footer is computed from the rows
// above it: "Out of bounds values" sums the wrong counts of the checked rows only (N/A when none
// was checked; the rows not checked are counted apart) with OK/FAILED; "Avg bus bandwidth" is
// the mean busbw of each case's measured rows, one line per case, never mixed across cases; then
// the verdict and, for an incomplete run, why. Flushed line by line.
std::unique_ptr<ResultSink> make_table_sink(std::ostream& out);
// The table's footer alone (same lines), for runs that print no table: every --format
// combination ends with the verdict on stdout.
std::unique_ptr<ResultSink> make_footer_sink(std::ostream& out);
// results.csv: header row of record_columns() CSV headers, then one row per record, quoted as
// RFC 4180 requires, flushed after every row. Lines starting with '#' before the header carry
// the context for humans (schema version, command line, and where the ceiling and model columns
// come from: the context's "link_ceilings" source and "model" topology); readers skip them.
std::unique_ptr<ResultSink> make_csv_sink(const std::string& path);
// run.json: {"schema_version", "complete", "incomplete_reason", "exit_code", "verdict", "context",
// "rows"}; rewritten through a temporary file and rename() after every row, so it always parses.
// Until finish() it says complete=false with reason kRunningReason and exit_code null; after
// it, incomplete_reason is null for a complete run. The file is first written by the constructor.
// finish() puts a non-null RunOutcome::health into context.telemetry.run_summary, and each key of
// RunOutcome::context_added into the context.
std::unique_ptr<ResultSink> make_json_sink(const std::string& path);
// What run.json says while the run goes on, and so also after a crash or a SIGKILL of rank 0.
inline constexpr const char* kRunningReason =
    "running, or ended without closing this file (a crash or SIGKILL of rank 0)";
// results.md: the outcome, a context summary and one Markdown table per case (as the table
// sink's cases; the ceiling and model columns where a row of the case has them), rewritten
// atomically after every row.
//
//
// The file sinks throw Error naming the path and the system's reason, from the constructor when
// it cannot be written and from any later call that fails to write; its code is
// write_error_code() of the reason. results.csv keeps whole rows: a row that could not be written
// in full is cut off again. run.json's finish() on a full disk rewrites the file in place, without
// indentation, so that it still says how the run ended.
std::unique_ptr<ResultSink> make_markdown_sink(const std::string& path);

// The exit code of a failed write: runtime (6, an I/O error) where the storage failed (no space,
// quota, EIO, file too large), usage (2) where the path given cannot be written (permissions, not
// a file, read-only file system, no such folder).
ExitCode write_error_code(int err);

// Sends every call to several sinks, in the order added. Every sink gets every call even when an
// earlier one throws; the first error is rethrown after the last sink. Rows go out sealed
// (results/row_check.h): no writer behind it writes a value that is not finite or is impossible.
class FanoutSink : public ResultSink {
 public:
  void add_sink(std::unique_ptr<ResultSink> s) { sinks_.push_back(std::move(s)); }
  void begin(const Json& context) override;
  void add(const RunRecord& row) override;
  void finish(const RunOutcome& outcome) override;
  void revise(const std::vector<RunRecord>& rows) override;

 private:
  std::vector<std::unique_ptr<ResultSink>> sinks_;
};

// Writes `text` to `path` through a temporary file of this process (`path`.tmp.PID) and
// rename(): readers never see a partial file, and two processes never share a temporary file.
// Throws Error(write_error_code()) naming the path when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace ccbench
