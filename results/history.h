#pragma once
// The results history: every run appended to one store (`--db` or CCBENCH_DB: an SQLite file, or
// a PostgreSQL URL; results/store.h), so that runs can be listed, a case followed over time on a
// host, and a node compared with the median of the other nodes of its kind. The verbs are
// written here once, over either store. Several jobs may append at once: a run lands whole or
// not at all (one transaction), and the same run added twice is stored once. A damaged or foreign
// store gives Error(precondition) naming it and what to do; a store that cannot be read or written
// as asked gives Error(usage) with the store's reason, as --out does; the results files of a run
// are written before and never depend on it. Rows with impossible values (results/row_check.h)
// are stored as written only by a run itself (sealed by then); readers mark them (trend) or leave
// them out (fleet).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "results/record.h"
#include "results/store.h"

namespace ccbench {

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

class History {
 public:
  // Opens the store `db` (results/store.h) and brings its tables to this ccbench's schema
  // (results/store_schema.h): creates them (append), or upgrades an older store (also when
  // reading: an upgrade is the one write a read makes, and needs write access). Throws
  // Error(usage) naming the store and its reason when it is missing or holds no history yet
  // (read) or cannot be written (append), Error(precondition) when it cannot be reached, is
  // damaged, not a ccbench history, or of a newer schema.
  explicit History(const std::string& db, HistoryAccess access = HistoryAccess::append);
  // Checks, without writing to it, that a run can append to the store at its end (every rank,
  // before MPI): an existing SQLite file must be a history of a schema this ccbench reads, and
  // the file (or, when missing, its folder) writable. A PostgreSQL store is checked by rank 0's
  // opening alone (one connection per job, not per rank): here nothing.
  static void probe(const std::string& db);
  ~History();
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // Appends one run (its context as in run.json, its rows, its verdict and exit code, empty when
  // not known) in one transaction: readers see all of it or none; returns the run's id. Rows
  // are stored sealed (results/row_check.h). A run already stored is not stored again, also
  // when two jobs add it at the same moment: the id is the stored run's, and *already_stored
  // (when given) says so. The same run is the same start time, command, first host and commit
  // with the same rows as results.csv writes them (run_fingerprint, results/store_schema.h).
  long long append(const Json& context, const std::vector<RunRecord>& rows, const std::string& verdict,
                   std::optional<int> exit_code, bool* already_stored = nullptr);
  std::vector<HistoryRun> runs(const std::string& host = "") const;  // oldest first, whole runs only
  std::vector<TrendPoint> trend(const CaseFilter& filter) const;     // oldest first
  // Per case and size: the median over the latest run of every other host of `kind` (rows ok
  // and sound only: a stored row with impossible values is left out and counted in
  // *damaged_left_out); the times and spreads are medians of the hosts' figures, the bandwidths
  // follow from the median times as a run computes them. Empty when no other host of that kind
  // is stored.
  std::vector<RunRecord> fleet_median(const std::string& kind, const std::string& exclude_host, int* hosts_used,
                                      int* damaged_left_out = nullptr) const;
  // The store for messages: the path, or the URL without its password.
  const std::string& label() const { return store_->label(); }

 private:
  std::unique_ptr<StoreConnection> store_;
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
