#pragma once
// What a feature attaches to the sweep (harness/engine/runner.h) through: a RunnerHook. The Runner
// holds a list of hooks, given at construction, and calls each of them, in the order of the
// list, at the points below; a feature sees the sweep only there (the --overlap load, the
// --energy window, the health telemetry). Every call has a default that does nothing.
//
// Where the calls happen, for one measured row (one size and placement of one case):
//   label(row)            every row of an implementation in the plan, skipped and failed ones
//                         too, as its case's columns are filled in (not the rows of requested
//                         implementations that cannot run here, SweepPlan::skipped)
//   begin_row()           the row is to be measured (it was not skipped), before its phases
//     [warm-up]
//     begin_timed()       before the timed batch
//       begin_batch(s)    the timed batch: after its barrier, just outside its timing marks
//       end_batch(s)      just after its marks, before the batch's calls are waited for
//     [single iterations]
//     end_timed(done)     after the single iterations (done true); also when begin_timed() or
//                         the timed phases threw (done false: the row fails, the hook only
//                         cleans up)
//     extra_phase(calls)  after the timed phases, before the CUDA-graph replays: a phase of the
//                         hook's own, running the row's collective through `calls`
//     [CUDA-graph replays, checks]
//   end_row(comm, where, row)  the row's outcome was agreed ok over every rank: the columns the
//                         hook adds to the eager row (its per-rank columns are set; its times and
//                         wrong count are filled in after the hooks)
//   graph_row(row)        the CUDA-graph row made from the eager row (-G): clear what does not
//                         hold for the replays
//
// Ranks: every call is made on every rank of the Runner's communicator, in the same order, at
// the same points (a skipped row is skipped on every rank; a failed row fails on every rank).
// So a hook may make collective calls over the communicator in end_row() and, as the engine's own
// phases do, in extra_phase(); anywhere else it must not (a rank whose phases threw goes straight
// to the agreement, the others may still be inside a collective). A hook that communicates
// must do so on every rank, with the same calls.
//
// What a hook may do: throw Error from begin_row() to extra_phase(): the row fails with that error
// (agreed over the ranks; a runtime error or timeout stops the sweep, as a failed call does), and
// end_timed(false) is still called. A rank that throws alone leaves the others in the row's
// collectives, waiting for it until the phase's deadline ends the job (exit 5), as after a failed
// call: a failure one rank may meet alone belongs in an agreed step before the sweep. A hook
// reads and sets the row's columns in label(), end_row() and graph_row(). What it may not: touch
// the buffers or the timing marks, or call the collective other than through `calls`; take long
// between begin_batch() and end_batch() (that is the timed batch); throw from label(),
// end_timed(false) or graph_row().
#include <chrono>
#include <cstdint>
#include <string>

#include <mpi.h>

#include "results/record.h"

namespace ccbench {

// The row's collective, for a hook's own phase (RunnerHook::extra_phase), on this rank.
class RowCalls {
 public:
  virtual ~RowCalls() = default;
  // "allreduce/ring float sum 4K in-place": the row in phase names and messages.
  virtual const std::string& where() const = 0;
  // This rank's time per collective in the timed batch, in microseconds.
  virtual double batch_us() const = 0;
  // Collectives per call (-m).
  virtual int collectives_per_call() const = 0;
  // Starts the phase `phase` (the watchdog's name for it is where() + ": " + phase, with
  // `timeout`): fresh input, then a barrier over every rank. Collective.
  virtual void start(const std::string& phase, std::chrono::milliseconds timeout) = 0;
  // `calls` calls of collectives_per_call() collectives back to back, then waits for them.
  virtual void run(std::int64_t calls) = 0;
  // Checks the output as the timed batch's is (where -c and the operation allow), counting
  // wrong elements into the row's; `when` names the check in its message.
  virtual void check(const std::string& when) = 0;
};

class RunnerHook {
 public:
  virtual ~RunnerHook() = default;
  virtual void label(RunRecord& /*row*/) const {}
  virtual void begin_row() {}
  virtual void begin_timed() {}
  virtual void begin_batch(void* /*stream: cudaStream_t, or null on CPU*/) {}
  virtual void end_batch(void* /*stream*/) {}
  virtual void end_timed(bool /*done*/) {}
  virtual void extra_phase(RowCalls& /*calls*/) {}
  virtual void end_row(MPI_Comm /*comm*/, const std::string& /*where: RowCalls::where()*/, RunRecord& /*row*/) {}
  virtual void graph_row(RunRecord& /*row*/) const {}
};

}  // namespace ccbench
