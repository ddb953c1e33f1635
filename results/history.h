#pragma once
// The results history: every run appended to one SQLite file (`--db FILE` or CCBENCH_DB), so
// that runs can be listed, a case followed over time on a host, and a node compared with the
// median of the other nodes of its kind. Several jobs may append at once: the file uses WAL and
// waits up to kBusyTimeoutMs for a writer. A damaged or foreign file gives Error(precondition)
// naming it and what to do; the results files of a run are written before and never depend on it.
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
  int exit_code = 0, rows = 0;
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

class History {
 public:
  // Opens or creates the store; throws Error(precondition) when the file is damaged, not a
  // ccbench history, or of a newer schema.
  explicit History(const std::string& path);
  // Checks an existing store without writing to it (every rank, before MPI); a missing file is fine.
  static void probe(const std::string& path);
  ~History();
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // Appends one run (its context as in run.json, its rows, its verdict) in one transaction;
  // returns the run's id.
  long long append(const Json& context, const std::vector<RunRecord>& rows, const std::string& verdict,
                   int exit_code);
  std::vector<HistoryRun> runs(const std::string& host = "") const;  // oldest first
  std::vector<TrendPoint> trend(const CaseFilter& filter) const;     // oldest first
  // Per case and size: the median over the latest run of every other host of `kind` (rows ok
  // only); the times, spreads and busbw are medians of the hosts' figures. Empty when no other
  // host of that kind is stored.
  std::vector<RunRecord> fleet_median(const std::string& kind, const std::string& exclude_host,
                                      int* hosts_used) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// `ccbench history`'s tables: one line per run; one line per row of a case's trend.
std::string runs_table(const std::vector<HistoryRun>& runs);
std::string trend_table(const std::vector<TrendPoint>& points);

// The kind of node a run measured, for --against-fleet: device, GPU model where known, ranks per
// node ("gpu NVIDIA H200 x2", "cpu x4").
std::string node_kind(const Json& context);
// The host of a run (its first rank's), or "?".
std::string run_host(const Json& context);

}  // namespace ccbench
