#pragma once
// Progress of a run, for people watching it: measurements done of the total, time elapsed and an
// estimate of the time left, on stderr. A ResultSink decorator on rank 0, fed by the rows as the
// runner emits them: on a terminal one line updated in place (\r), otherwise a line every
// `interval` (logs and batch jobs stay readable).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "collectives/types.h"
#include "harness/engine/options.h"
#include "results/sink.h"

namespace ccbench {

// What the sweep will measure: one measurement per (cycle, collective, implementation, dtype,
// op, size, in-place variant).
struct ProgressPlan {
  std::vector<Collective> collectives;
  std::vector<std::string> impls;  // the implementations that run (not those skipped up front)
  std::size_t dtypes = 1, ops = 1, sizes = 1;
  InPlaceChoice in_place = InPlaceChoice::both;
  int cycles = 1;  // 0: until stopped (no total, no estimate)

  // Out-of-place and in-place variants measured per size of `c`.
  std::uint64_t variants(Collective c) const;
  // Measurements of one implementation on one collective, in one cycle.
  std::uint64_t per_pair(Collective c) const;
  // Measurements of one cycle.
  std::uint64_t per_cycle() const;
};

struct ProgressSettings {
  bool terminal = false;                        // update one line in place
  std::chrono::duration<double> interval{5.0};  // between lines when not a terminal
  std::FILE* out = stderr;
};

// Counts the rows as measurements: a measured size counts one; a row that stands for a whole
// case (an unsupported dtype, a failed set-up) counts what that case would have measured; when
// the rows move on to another implementation or collective, the previous one counts as done.
class ProgressSink final : public ResultSink {
 public:
  ProgressSink(std::unique_ptr<ResultSink> inner, ProgressPlan plan, ProgressSettings settings);
  void begin(const Json& context) override;
  void add(const RunRecord& row) override;
  void finish(const RunOutcome& outcome) override;
  void revise(const std::vector<RunRecord>& rows) override { inner_->revise(rows); }

  // The progress line as it stands ("37/120 measurements (31%), 42 s elapsed, about 1 min 30 s left").
  std::string line() const;
  std::uint64_t done() const;

 private:
  void account(const RunRecord& row);
  void clear_line();
  void show();

  std::unique_ptr<ResultSink> inner_;
  ProgressPlan plan_;
  ProgressSettings settings_;
  std::chrono::steady_clock::time_point start_, last_shown_;
  std::string pair_;  // "collective/impl" the rows are on
  std::uint64_t pair_done_ = 0, pair_total_ = 0, closed_ = 0;
  bool shown_ = false;
};

// "42 s", "3 min 05 s", "2 h 07 min".
std::string format_duration(std::chrono::duration<double> d);

}  // namespace ccbench
