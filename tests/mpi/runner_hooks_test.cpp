// The hook contract of harness/engine/runner_hook.h, held against a real Runner on CPU ranks: the
// calls come in the documented order for every measured row, on every rank; skipped rows are
// labelled and get no other call; end_row() may communicate (it runs on every rank) and sees the
// agreed row; a hook's extra_phase() runs the row's collective and its check counts wrong
// elements; a begin_timed() that throws fails the row on every rank and still hears
// end_timed(false). Run under mpirun with 2 or more ranks. Prints "runner hooks: N ranks, C checks
// per rank: ok" and exits 0 when every check holds on every rank; 1 naming the failures.
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/engine/runner.h"
#include "harness/job/job_guard.h"
#include "harness/run.h"
#include "tests/mpi/mpi_checks.h"

namespace {

using namespace ccbench;
using namespace ccbench::mpi_checks;

// Rank 0's rows, as the Runner emits them.
struct Rows : ResultSink {
  std::vector<RunRecord> rows;
  void begin(const Json&) override {}
  void add(const RunRecord& row) override { rows.push_back(row); }
  void finish(const RunOutcome&) override {}
};

// Writes every call into `calls`, one letter each; labels rows, and in end_row() sums a figure
// over the ranks (a collective call) into the row's load_during.
struct Recorder : RunnerHook {
  std::string calls;
  bool throw_in_begin_timed = false;
  bool extra_calls = false;  // extra_phase runs the collective twice and checks it
  void label(RunRecord& row) const override { row.load = "recorded"; }
  void begin_row() override { calls += 'r'; }
  void begin_timed() override {
    calls += 't';
    if (throw_in_begin_timed) throw Error(ExitCode::precondition, "planted by the hook");
  }
  void begin_batch(void*) override { calls += 'b'; }
  void end_batch(void*) override { calls += 'B'; }
  void end_timed(bool done) override { calls += done ? 'T' : 'F'; }
  void extra_phase(RowCalls& c) override {
    calls += 'x';
    if (!extra_calls) return;
    c.start("hook phase", std::chrono::seconds(30));
    c.run(2);
    c.check("after the hook's phase");
  }
  void end_row(MPI_Comm comm, const std::string& where, RunRecord& row) override {
    calls += 'e';
    int one = 1, ranks = 0;
    MPI_Allreduce(&one, &ranks, 1, MPI_INT, MPI_SUM, comm);
    row.load_during = ranks;
    row.load_unit = where;
  }
  void graph_row(RunRecord&) const override {}
};

RunOptions options() {
  RunOptions o;
  o.sweep = SweepSpec{8, 64, 8.0, 0};  // 8 and 64 bytes
  o.iterations = 3;
  o.warmup = 1;
  o.collectives = {Collective::allreduce};
  o.impls = {"ring"};
  o.in_place = InPlaceChoice::no;
  o.timeout = std::chrono::seconds(60);
  return o;
}

// One sweep with `hooks` over every rank; rank 0's rows.
std::vector<RunRecord> sweep(const RunOptions& o, JobGuard& guard, const RankLayout& layout,
                             std::vector<RunnerHook*> hooks) {
  std::unique_ptr<Backend> backend = make_cpu_backend();
  SweepPlan plan = plan_implementations(o, Device::cpu);
  plan.sizes = {8, 64};
  ImplContext base;
  base.comm = MPI_COMM_WORLD;
  base.layout = &layout;
  base.device = Device::cpu;
  base.timeout = o.timeout;
  Rows rows;
  Runner runner(o, plan, base, *backend, g_rank == 0 ? &rows : nullptr, guard, std::move(hooks));
  runner.run();
  return rows.rows;
}

void run() {
  JobGuard guard(std::chrono::seconds(60), g_rank);
  const RankLayout layout = real_layout();
  guard.identify(g_rank, layout.host(), layout.host_of);

  // Two measured rows, two hooks; one of them runs a phase of its own.
  {
    RunOptions o = options();
    o.dtypes = {DataType::float32};
    Recorder a, b;
    a.extra_calls = true;
    const std::vector<RunRecord> rows = sweep(o, guard, layout, {&a, &b});
    const std::string row_calls = "rtbBTxe";
    check(a.calls == row_calls + row_calls, "hook calls per measured row in order: got " + a.calls);
    check(b.calls == a.calls, "every hook of the list gets the same calls: got " + b.calls);
    if (g_rank == 0) {
      check(rows.size() == 2, fmt::format("two rows, got {}", rows.size()));
      for (const RunRecord& r : rows) {
        check(r.status == RowStatus::ok, "row ok: " + r.reason);
        check(r.load == "recorded", "label() reached the row: " + r.load);
        check(r.load_during == g_n, fmt::format("end_row() communicated over every rank: {}", r.load_during.value_or(-1)));
        check(r.load_unit.find("allreduce/ring float sum") == 0, "end_row() got the row's name: " + r.load_unit);
        check(r.wrong == 0, "the hook's phase left the output right and it was checked");
      }
    }
  }
  // A size of less than one element per rank is skipped (all-gather of 8 bytes of doubles over 2
  // or more ranks): labelled, no other call.
  {
    RunOptions o = options();
    o.collectives = {Collective::allgather};
    o.dtypes = {DataType::float64};
    Recorder a;
    const std::vector<RunRecord> rows = sweep(o, guard, layout, {&a});
    check(a.calls == "rtbBTxe", "the skipped row gets no call beyond label: got " + a.calls);
    if (g_rank == 0) {
      check(rows.size() == 2 && rows[0].status == RowStatus::skipped && rows[0].load == "recorded",
            "the skipped row is labelled");
    }
  }
  // A hook that throws in begin_timed() (on every rank, as a failure every rank meets) fails the
  // row with its error, hears end_timed(false), and gets no end_row(); the sweep goes on.
  {
    RunOptions o = options();
    Recorder a;
    a.throw_in_begin_timed = true;
    const std::vector<RunRecord> rows = sweep(o, guard, layout, {&a});
    check(a.calls == "rtFrtF", "a failing row: end_timed(false), no end_row: got " + a.calls);
    if (g_rank == 0) {
      check(rows.size() == 2, fmt::format("two failed rows, got {}", rows.size()));
      for (const RunRecord& r : rows)
        check(r.status == RowStatus::failed && r.reason.find("planted by the hook") != std::string::npos,
              "the row failed with the hook's error: " + r.reason);
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return ccbench::mpi_checks::main_of(&argc, &argv, "runner hooks", 2, run); }
