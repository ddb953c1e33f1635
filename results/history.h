#pragma once
// The results history: every run appended to one SQLite file (`--db FILE` or CCBENCH_DB), so
// that runs can be listed, a case followed over time on a host, and a node compared with the
// median of the other nodes of its kind. Several jobs may append at once: the file uses WAL and
// waits up to kBusyTimeoutMs for a writer. A damaged or foreign file gives Error(precondition)
// naming it and what to do; a file that cannot be read or written as asked gives Error(usage)
// with the system's reason, as --out does; the results files of a run are written before and
// never depend on it. Rows with impossible values (results/row_check.h) are stored as written
// only by a run itself (sealed by then); readers mark them (trend) or leave them out (fleet).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "results/record.h"

struct sqlite3;

namespace ccbench {

inline constexpr int kHistorySchemaVersion = 1;
inline constexpr int kBusyTimeoutMs = 30000;  // a writer holds the file for milliseconds; 30 s covers a busy disk
inline constexpr int kBusyRetryMs = 20;      // between tries when SQLite answers busy without waiting

struct HistoryRun {
  long long id = 0;
  std::string started_utc, host, kind, git_hash, verdict, command;
  std::optional<int> exit_code;  // empty: not known (an import without run.json)
  int rows = 0;
};

// A case, for trends: empty fields match anything.
struct CaseFilter {
  std::string collective, impl, transport, dtype, host;
  std::uint64_t bytes = 0;  // 0: every size
};

struct TrendPoint {
  HistoryRun run;
  RunRecord row;
};

// How a store is opened: `read` needs an existing file and never writes to it (a read-only file,
// in a read-only folder too, can be read); `append` creates a missing file and needs it (and its
// folder, where SQLite keeps its -wal and -shm files) writable.
enum class HistoryAccess { read, append };

class History {
 public:
  // Opens the store; throws Error(usage) naming the file and the system's reason when it is
  // missing (read) or cannot be written (append), Error(precondition) when it is damaged, not a
  // ccbench history, or of a newer schema.
  explicit History(const std::string& path, HistoryAccess access = HistoryAccess::append);
  // Checks, without writing to it, that a run can append to the store at its end (every rank,
  // before MPI): an existing file must be a history of a schema this ccbench reads, and the file
  // (or, when missing, its folder) writable.
  static void probe(const std::string& path);
  ~History();
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // Appends one run (its context as in run.json, its rows, its verdict and exit code, empty when
  // not known) in one transaction; returns the run's id. Rows are stored sealed
  // (results/row_check.h). A run already stored is not stored again: the id is the stored
  // run's, and *already_stored (when given) says so. The same run is the same start time,
  // command, first host and commit with the same rows as results.csv writes them (so a run
  // appended by itself and later added from its results folder is one run).
  long long append(const Json& context, const std::vector<RunRecord>& rows, const std::string& verdict,
                   std::optional<int> exit_code, bool* already_stored = nullptr);
  std::vector<HistoryRun> runs(const std::string& host = "") const;  // oldest first
  std::vector<TrendPoint> trend(const CaseFilter& filter) const;     // oldest first
  // Per case and size: the median over the latest run of every other host of `kind` (rows ok
  // and sound only: a stored row with impossible values is left out and counted in
  // *damaged_left_out); the times and spreads are medians of the hosts' figures, the bandwidths
  // follow from the median times as a run computes them. Empty when no other host of that kind
  // is stored.
  std::vector<RunRecord> fleet_median(const std::string& kind, const std::string& exclude_host, int* hosts_used,
                                      int* damaged_left_out = nullptr) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// `ccbench history`'s tables: one line per run; one line per row of a case's trend (a row with
// impossible values says so in its status column).
std::string runs_table(const std::vector<HistoryRun>& runs);
std::string trend_table(const std::vector<TrendPoint>& points);

// The kind of node a run measured, for --against-fleet: device, GPU model where known, ranks per
// node ("gpu NVIDIA H200 x2", "cpu x4").
std::string node_kind(const Json& context);
// The host of a run (its first rank's), or "?".
std::string run_host(const Json& context);

}  // namespace ccbench
