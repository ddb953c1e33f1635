#pragma once
// The sweep: for every collective, implementation, data type, operation, size and in-place
// choice, one measurement (warm-up, a back-to-back batch, then timed single iterations, each
// checked), agreed over all ranks and handed to the result sink on rank 0.
#include <memory>
#include <mutex>
#include <vector>

#include <mpi.h>

#include "collectives/implementation.h"
#include "harness/engine/backend.h"
#include "harness/job/bootstrap.h"
#include "harness/engine/options.h"
#include "harness/job/job_guard.h"
#include "harness/engine/runner_hook.h"
#include "core/exit_code.h"
#include "results/sink.h"

namespace ccbench {

struct SweepPlan {
  std::vector<std::uint64_t> sizes;
  std::vector<const ImplInfo*> impls;  // the implementations to measure, for plan.device
  // Implementations made for this run (--nccl-config variants), which `impls` points into.
  std::vector<std::shared_ptr<const ImplInfo>> made;
  // Requested implementations that cannot run here: (name, reason), reported as skipped rows.
  std::vector<std::pair<std::string, std::string>> skipped;
  Device device = Device::cpu;
};

// `plan` with every NCCL implementation replaced by one per configuration of `configs`
// (--nccl-config; none: the plan as it is), in the order of the configurations.
SweepPlan with_nccl_configs(SweepPlan plan, const std::vector<NcclConfig>& configs);

// The ranks a Runner measures: every rank ("world"), or one group of a sub-group run
// (harness/groups/groups.h): rows name the group, and their slowest rank is given as a rank of
// MPI_COMM_WORLD (`world_ranks`: that of every rank of the communicator, in order).
struct RunnerGroup {
  std::string name = "world";
  std::vector<int> world_ranks;  // empty: the communicator is MPI_COMM_WORLD's ranks in order
};

class Runner {
 public:
  // `sink` is non-null on rank 0 only. `base` carries comm, layout, device, stream, timeout.
  // `guard`: the phases of every measurement go to its watchdog; a timeout this rank meets ends
  // the job through it; while run() runs, it aborts the implementations set up so far.
  // `hooks`: the features attached to the sweep (harness/engine/runner_hook.h), called in this order;
  // they outlive the Runner, and every rank gives the same kinds in the same order.
  Runner(const RunOptions& opts, SweepPlan plan, const ImplContext& base, Backend& backend, ResultSink* sink,
         JobGuard& guard, std::vector<RunnerHook*> hooks = {}, RunnerGroup group = {});
  ~Runner();
  // Runs every cycle of the sweep; returns this rank's exit code (not yet agreed).
  ExitCode run();
  // Rows seen so far (rank 0; others hold none).
  const std::vector<RunRecord>& rows() const { return rows_; }
  // True if at least one measurement ran (not skipped).
  bool measured_any() const { return measured_any_; }
  // Why the sweep stopped early (empty if it did not).
  const std::string& stop_reason() const { return stop_reason_; }
  // Rank 0 of a world run: {impl: [{rank, prev, next} per rank]} of the ring implementations set
  // up so far, as each rank's implementation connected them (Implementation::ring_neighbours).
  const Json& ring_neighbours() const { return ring_neighbours_; }

 private:
  struct ImplState;
  struct Series;
  struct Measurement;
  class Calls;
  void run_collective(Collective coll);
  std::vector<CaseSpec> runnable_cases(ImplState& impl, Collective coll);
  std::unique_ptr<Series> open_series(ImplState& impl, const CaseSpec& first);
  // Every size and placement of one case; each measurement goes through the phases below.
  void run_case(ImplState& impl, Series& series, const CaseSpec& spec);
  // One measurement; returns false when the sweep must stop (runtime error, timeout).
  bool measure(ImplState& impl, Series& series, Measurement& m);
  // The phases of a measurement, in order. Each works on this rank alone (no agreement).
  Measurement plan_measurement(Series& bufs, const CaseSpec& spec, std::uint64_t size, bool in_place) const;
  void reset(Series& bufs, const Measurement& m);  // input in place, output poisoned
  void prepare(Series& bufs, Measurement& m);      // inputs, expected output, guards armed
  void warm_up(Implementation& impl, Measurement& m);
  // The timed batch and the single iterations, between the hooks' begin_timed() and end_timed().
  void timed_phases(ImplState& impl, Series& bufs, Measurement& m);
  void timed_batch(Implementation& impl, Series& bufs, Measurement& m);
  void single_iterations(ImplState& impl, Series& bufs, Measurement& m);
  // One collective on fresh input, checked: where -m N collectives in place change their result.
  void check_alone(Implementation& impl, Series& bufs, Measurement& m);
  void graph_replays(Implementation& impl, Series& bufs, Measurement& m);
  void check_output(Series& bufs, Measurement& m, const std::string& when, std::int64_t& counter);
  void check_send_buffer(Measurement& m);
  void damage_send_buffer(const std::string& impl, const Measurement& m);  // CCBENCH_FAULT corrupt_send
  void check_guards(Series& bufs, Measurement& m);
  // Agreement over all ranks, then the eager row and (with -G) the graph row.
  bool agree(Measurement& m, RunRecord row, const Outcome& local);
  bool graph_checked(const Measurement& m) const;  // in-place replays of most ops change the data
  void emit_measured(Measurement& m, RunRecord row, std::int64_t wrong, std::int64_t graph_wrong, std::int64_t damaged,
                     const std::vector<std::string>& descriptions);
  // Call helpers: each call is counted on the progress board first, so that a stuck run can
  // name who is behind. call() issues `collectives` of the case back to back (-m).
  void call(Implementation& impl, const CallArgs& args, int collectives);
  void barrier();
  void sync(Implementation& impl);
  void emit(RunRecord row);
  [[noreturn]] void abort_on_timeout(RunRecord row, const std::string& message);
  // This rank in messages: "rank W (host H)" by its MPI_COMM_WORLD rank, in a group run with
  // "; rank r of group G" added.
  std::string who() const;
  // In a group run, how the group's ranks (as the implementations name them) map to world ranks.
  std::string group_ranks_note() const;
  RunRecord base_record(const ImplState& impl, const CaseSpec& spec) const;
  ImplState* ready(const ImplInfo& info);
  void record_ring(const ImplState& st);  // collective: every rank's ring neighbours to rank 0
  // From the thread ending the job (JobGuard::end_job): Implementation::abort_from_watchdog() of
  // every implementation set up so far; returns what each did.
  std::vector<std::string> abort_implementations();

  const RunOptions& opts_;
  SweepPlan plan_;
  ImplContext base_;
  Backend& backend_;
  ResultSink* sink_;
  JobGuard& guard_;
  Watchdog& watchdog_;
  int rank_ = 0, nranks_ = 1;
  std::vector<std::unique_ptr<ImplState>> impls_;  // appended under impls_mutex_
  std::mutex impls_mutex_;
  std::vector<RunRecord> rows_;
  Json ring_neighbours_ = Json::object();
  ExitCode code_ = ExitCode::ok;
  bool measured_any_ = false;
  bool stop_ = false;
  int cycle_ = 1;  // the sweep being measured (-N), from 1: every row's cycle column
  std::string stop_reason_;
  bool fault_fired_ = false;
  std::string fault_refusal_;  // CCBENCH_FAULT's index names no element: this rank's row fails with it (exit 2)
  int world_rank_ = 0;
  int slow_ms_ = 0;  // CCBENCH_FAULT slow: sleep this long after every call of this measurement
  std::vector<RunnerHook*> hooks_;
  const std::string group_;
  const std::vector<int> world_ranks_;  // RunnerGroup::world_ranks
  // Whether the injected fault (if any) applies to this rank, implementation, size, iteration.
  bool fault_here(const std::string& impl, std::uint64_t size, int iteration) const;
  // The delay of the `slow` fault for this rank in a measurement of `impl` at `size` (0: none).
  int slow_fault_ms(const std::string& impl, std::uint64_t size) const;
};

}  // namespace ccbench
