#include "harness/engine/runner.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/checks.h"
#include "harness/job/bootstrap.h"
#include "harness/engine/guarded_buffer.h"
#include "harness/engine/row_columns.h"
#include "harness/engine/sizes.h"
#include "core/error.h"
#include "results/format.h"
#include "results/links.h"
#include "results/stats.h"

namespace ccbench {

namespace {

// Head start of single timed GPU iterations: longer than the host needs to queue a collective.
constexpr double kHeadStartUs = 200.0;
// Why a measured row has no wrong count.
constexpr const char* kNotCheckedReason = "not checked (-c 0)";
constexpr const char* kGraphNotCheckedReason =
    "not checked: replaying in-place iterations of this op changes the data; see the eager row";

// Bytes of each buffer of a series: the largest size, plus the -u offset of the widest data type.
std::size_t buffer_capacity(const RunOptions& opts, std::uint64_t largest) {
  std::size_t widest = 1;
  for (DataType t : opts.dtypes) widest = std::max(widest, element_size(t));
  return largest + static_cast<std::size_t>(opts.misalign) * widest;
}

std::string case_name(const CaseSpec& s, const std::string& impl) {
  return case_words(std::string(name(s.coll)), impl, std::string(name(s.dtype)),
                    has_reduce_op(s.coll) ? std::string(name(s.op)) : "none");
}

}  // namespace

// An implementation once set up, kept for the whole run.
struct Runner::ImplState {
  const ImplInfo* info = nullptr;
  std::unique_ptr<Implementation> impl;
  ImplContext ctx;
  bool usable = false;
  std::string failure;  // why set-up failed
  std::string refusal;  // why it cannot run here at all (Implementation::refuses): never set up
};

// The buffers of one (collective, implementation) series: send S, receive R (from the
// implementation's allocator), expected output E and pristine input P (plain device memory).
// One (size, placement) measurement of a case: its pointers, and what each phase found on this
// rank.
struct Runner::Measurement {
  CaseSpec spec{};
  std::uint64_t size = 0;  // as swept (the shape's bytes may be rounded to whole elements)
  CollectiveShape shape{};
  bool in_place = false;
  bool graphs = false;  // CUDA-graph replays follow the eager phases
  std::string where;    // "allreduce/ring float sum 4K in-place": phases and messages
  PatternSpec pat{};
  std::size_t esz = 0, offset = 0, send_bytes = 0, recv_bytes = 0;
  std::byte* S = nullptr;  // send buffer, after the -u offset
  std::byte* R = nullptr;  // receive buffer, after the -u offset
  const void* send = nullptr;
  void* recv = nullptr;
  std::byte* out = nullptr;  // where the result lands
  std::size_t checked = 0;   // output elements on this rank (none away from a reduce/gather root)
  CallBuffers buffers{};     // the collective's in-place layout (collectives/types.h)
  CallArgs args() const { return CallArgs{spec, send, recv, shape.count}; }

  std::string algorithm, graph_algorithm;  // impl.describe() of the eager and captured calls
  double batch_us = 0;
  std::vector<double> iter_us, graph_us;
  std::int64_t wrong = 0, graph_wrong = 0, damaged = 0;  // damaged: guard bytes
  std::string first_wrong;
};

struct Runner::Series {
  Series(Backend& b, Allocator* a, std::size_t cap)
      : send(b, a, cap), recv(b, a, cap), expected(b, nullptr, cap), pristine(b, nullptr, cap) {}
  GuardedBuffer send, recv, expected, pristine;
};

// The row's collective for a hook's own phase (RunnerHook::extra_phase): fresh input, calls of
// -m collectives back to back, the output checked as the timed batch's.
class Runner::Calls : public RowCalls {
 public:
  Calls(Runner& r, Implementation& impl, Series& bufs, Measurement& m) : r_(r), impl_(impl), bufs_(bufs), m_(m) {}
  const std::string& where() const override { return m_.where; }
  double batch_us() const override { return m_.batch_us; }
  int collectives_per_call() const override { return r_.opts_.agg_iters; }
  void start(const std::string& phase, std::chrono::milliseconds timeout) override {
    r_.watchdog_.enter(m_.where + ": " + phase, timeout);  // before the barrier: enter() may do work
    r_.reset(bufs_, m_);
    r_.backend_.synchronize();
    r_.barrier();
  }
  void run(std::int64_t calls) override {
    for (std::int64_t i = 0; i < calls; ++i) r_.call(impl_, m_.args(), r_.opts_.agg_iters);
    r_.sync(impl_);
  }
  void check(const std::string& when) override {
    if (r_.opts_.check && (!m_.in_place || repeats_in_place(m_.spec.coll, m_.spec.op)))
      r_.check_output(bufs_, m_, when, m_.wrong);
  }

 private:
  Runner& r_;
  Implementation& impl_;
  Series& bufs_;
  Measurement& m_;
};

SweepPlan with_nccl_configs(SweepPlan plan, const std::vector<NcclConfig>& configs) {
  if (configs.empty()) return plan;
  std::vector<const ImplInfo*> impls;
  for (const ImplInfo* info : plan.impls) {
    std::vector<ImplInfo> variants = nccl_config_variants(*info, configs);
    if (variants.empty()) impls.push_back(info);
    for (ImplInfo& v : variants) {
      plan.made.push_back(std::make_shared<const ImplInfo>(std::move(v)));
      impls.push_back(plan.made.back().get());
    }
  }
  plan.impls = std::move(impls);
  return plan;
}

Runner::Runner(const RunOptions& opts, SweepPlan plan, const ImplContext& base, Backend& backend, ResultSink* sink,
               JobGuard& guard, std::vector<RunnerHook*> hooks, RunnerGroup group)
    : opts_(opts), plan_(std::move(plan)), base_(base), backend_(backend), sink_(sink), guard_(guard),
      watchdog_(guard.watchdog()), hooks_(std::move(hooks)), group_(std::move(group.name)),
      world_ranks_(std::move(group.world_ranks)) {
  MPI_Comm_rank(base_.comm, &rank_);
  MPI_Comm_size(base_.comm, &nranks_);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
}

Runner::~Runner() = default;

bool Runner::fault_here(const std::string& impl, std::uint64_t size, int iteration) const {
  const auto& f = opts_.fault;
  if (!f || f->kind == FaultSpec::Kind::slow || fault_fired_ || f->rank != world_rank_) return false;
  if (!f->impl.empty() && f->impl != impl) return false;
  if (f->size && *f->size != size) return false;
  return f->kind == FaultSpec::Kind::alloc || iteration == f->iteration;
}

std::string Runner::who() const {
  if (world_ranks_.empty()) return fmt::format("rank {} (host {})", world_rank_, base_.layout->host());
  return fmt::format("rank {} (host {}; rank {} of group {})", world_rank_, base_.layout->host(), rank_, group_);
}

std::string Runner::group_ranks_note() const {
  if (world_ranks_.empty()) return "";
  return fmt::format(" (group {}'s ranks 0 to {} are world ranks {})", group_, nranks_ - 1,
                     fmt::join(world_ranks_, ", "));
}

int Runner::slow_fault_ms(const std::string& impl, std::uint64_t size) const {
  const auto& f = opts_.fault;
  if (!f || f->kind != FaultSpec::Kind::slow || f->rank != world_rank_) return 0;
  if ((!f->impl.empty() && f->impl != impl) || (f->size && *f->size != size)) return 0;
  return f->ms;
}

void Runner::emit(RunRecord row) {
  row.cycle = cycle_;
  if (row.status == RowStatus::ok || row.status == RowStatus::wrong) measured_any_ = true;
  if (row.status == RowStatus::wrong) code_ = more_severe(code_, ExitCode::wrong_results);
  if (rank_ != 0) return;
  if (sink_) sink_->add(row);
  rows_.push_back(std::move(row));
}

RunRecord Runner::base_record(const ImplState& st, const CaseSpec& spec) const {
  RunRecord r;
  r.collective = std::string(name(spec.coll));
  r.impl = st.info->name;
  r.transport = st.usable ? st.impl->transport() : "-";
  r.device = std::string(name(plan_.device));
  r.dtype = std::string(name(spec.dtype));
  r.op = has_reduce_op(spec.coll) ? std::string(name(spec.op)) : "none";
  r.root = has_root(spec.coll) ? spec.root : -1;
  r.ranks = nranks_;
  r.ranks_per_node = base_.layout->max_ranks_per_node();
  r.nodes = base_.layout->nodes;
  r.group = group_;
  r.cycle = cycle_;
  if (nranks_ == 2) {
    const int a = world_ranks_.empty() ? 0 : world_ranks_[0], b = world_ranks_.empty() ? 1 : world_ranks_[1];
    r.link = link_name(a, base_.layout->host_of[0], b, base_.layout->host_of[1]);
  }
  r.warmup = opts_.warmup;
  r.iterations = opts_.iterations;
  r.nccl_config = st.info->setting;
  for (RunnerHook* h : hooks_) h->label(r);
  return r;
}

// Sets up an implementation the first time it is used; every rank agrees whether that worked.
Runner::ImplState* Runner::ready(const ImplInfo& info) {
  for (auto& s : impls_)
    if (s->info == &info) return s.get();
  auto st = std::make_unique<ImplState>();
  st->info = &info;
  st->ctx = base_;
  watchdog_.enter(fmt::format("set-up of {}", info.name));
  const Outcome agreed = agree_outcome(base_.comm, run_catching([&] {
                                         st->impl = info.make();
                                         if (auto why = st->impl->refuses(st->ctx)) st->refusal = *why;
                                         else st->impl->setup(st->ctx);
                                       }));
  st->usable = agreed.code == ExitCode::ok && st->refusal.empty();
  if (st->usable) record_ring(*st);
  if (agreed.code != ExitCode::ok) {
    st->failure = agreed.message;
    code_ = more_severe(code_, agreed.code);
  }
  std::lock_guard lock(impls_mutex_);
  impls_.push_back(std::move(st));
  return impls_.back().get();
}

void Runner::record_ring(const ImplState& st) {
  const std::optional<RingNeighbours> mine = st.impl->ring_neighbours();
  const std::array<int, 3> v{mine ? 1 : 0, mine ? mine->prev : -1, mine ? mine->next : -1};
  std::vector<int> all(rank_ == 0 ? 3 * static_cast<size_t>(nranks_) : 0);
  check_mpi(MPI_Gather(v.data(), 3, MPI_INT, all.data(), 3, MPI_INT, 0, base_.comm), "MPI_Gather of ring neighbours");
  if (rank_ != 0 || !world_ranks_.empty()) return;  // a group's ring is its own (group ranks)
  Json ranks = Json::array();
  for (size_t r = 0; r < all.size(); r += 3) {
    if (!all[r]) return;  // not a ring here
    ranks.push_back({{"rank", r / 3}, {"prev", all[r + 1]}, {"next", all[r + 2]}});
  }
  ring_neighbours_[st.info->name] = ranks;
}

std::vector<std::string> Runner::abort_implementations() {
  std::lock_guard lock(impls_mutex_);
  std::vector<std::string> done;
  for (auto& s : impls_)
    if (s->impl)
      if (std::string what = s->impl->abort_from_watchdog(); !what.empty()) done.push_back(std::move(what));
  return done;
}

ExitCode Runner::run() {
  const JobGuard::Attachment attached = guard_.attach([this] { return abort_implementations(); });
  for (int cycle = 0; !stop_ && (opts_.cycles == 0 || cycle < opts_.cycles); ++cycle) {
    cycle_ = cycle + 1;
    const size_t first_row = rows_.size();
    for (Collective coll : opts_.collectives) {
      run_collective(coll);
      if (stop_) break;
    }
    if (opts_.cycles != 1 && rank_ == 0) {  // burn-in: errors per cycle
      std::int64_t wrong = 0, bad_rows = 0, failed = 0;
      for (size_t i = first_row; i < rows_.size(); ++i) {
        if (rows_[i].wrong.value_or(0) > 0) wrong += *rows_[i].wrong, ++bad_rows;
        if (rows_[i].status == RowStatus::failed) ++failed;
      }
      fmt::print("# cycle {}{}: {} rows, {} with wrong elements ({} elements), {} failed\n", cycle + 1,
                 opts_.cycles ? fmt::format(" of {}", opts_.cycles) : "", rows_.size() - first_row, bad_rows, wrong,
                 failed);
      std::fflush(stdout);
    }
  }
  watchdog_.leave();
  return code_;
}

void Runner::run_collective(Collective coll) {
  for (const auto& [impl_name, why] : plan_.skipped) {
    RunRecord r;
    r.collective = std::string(name(coll));
    r.impl = impl_name;
    r.device = std::string(name(plan_.device));
    r.ranks = nranks_;
    r.status = RowStatus::skipped;
    r.reason = why;
    emit(r);
  }
  for (const ImplInfo* info : plan_.impls) {
    ImplState* st = ready(*info);
    if (!st->refusal.empty()) {
      runnable_cases(*st, coll);  // every case skipped with the refusal
      continue;
    }
    if (!st->usable) {
      CaseSpec spec{coll, opts_.dtypes.front(), opts_.ops.front(), opts_.root};
      RunRecord r = base_record(*st, spec);
      r.status = RowStatus::failed;
      r.reason = "set-up failed: " + st->failure;
      emit(r);
      continue;
    }
    const std::vector<CaseSpec> cases = runnable_cases(*st, coll);
    if (cases.empty()) continue;
    std::unique_ptr<Series> series = open_series(*st, cases.front());
    if (!series) continue;
    for (const CaseSpec& spec : cases) {
      run_case(*st, *series, spec);
      if (stop_) break;
    }
    st->impl->detach();
    series.reset();
    if (stop_) return;
  }
}

// The (dtype, op) cases this implementation can run; the others are reported as skipped.
std::vector<CaseSpec> Runner::runnable_cases(ImplState& st, Collective coll) {
  std::vector<CaseSpec> cases;
  const std::vector<ReduceOp> ops = has_reduce_op(coll) ? opts_.ops : std::vector<ReduceOp>{ReduceOp::none};
  for (DataType t : opts_.dtypes) {
    for (ReduceOp op : ops) {
      CaseSpec spec{coll, t, op, opts_.root};
      std::optional<std::string> why;
      if (has_root(coll) && opts_.root >= nranks_)
        why = fmt::format("root {} does not exist with {} ranks (valid: 0 to {})", opts_.root, nranks_, nranks_ - 1);
      else if (!st.refusal.empty() && !undeclared_collective(*st.impl, st.info->name, coll)) why = st.refusal;
      else why = case_unsupported(*st.impl, st.info->name, spec, st.ctx);
      if (!why) {
        cases.push_back(spec);
        continue;
      }
      RunRecord r = base_record(st, spec);
      r.status = RowStatus::skipped;
      r.reason = *why;
      emit(r);
    }
  }
  return cases;
}

// One buffer set for the series (the largest size fits every dtype), attached to the
// implementation; every rank agrees. Null, with a failed row, when that did not work.
std::unique_ptr<Runner::Series> Runner::open_series(ImplState& st, const CaseSpec& first) {
  std::unique_ptr<Series> series;
  const std::string& impl = st.info->name;
  watchdog_.enter(fmt::format("{}/{}: buffer allocation and registration", name(first.coll), impl));
  const Outcome agreed = agree_outcome(
      base_.comm, run_catching([&] {
        if (fault_here(impl, plan_.sizes.back(), 0) && opts_.fault->kind == FaultSpec::Kind::alloc) {
          fault_fired_ = true;
          fail(ExitCode::precondition, "out of memory: allocation failure injected by CCBENCH_FAULT on {}", who());
        }
        series = std::make_unique<Series>(backend_, st.impl->allocator(), buffer_capacity(opts_, plan_.sizes.back()));
        st.impl->attach(BufferSet{series->send.data(), series->send.capacity(), series->recv.data(),
                                  series->recv.capacity(), first.coll});
      }));
  if (agreed.code == ExitCode::ok) return series;
  RunRecord r = base_record(st, first);
  r.bytes = plan_.sizes.back();  // the buffers are sized for the largest size asked
  r.status = RowStatus::failed;
  r.reason = fmt::format("buffers for {} ({} bytes each): {}", format_size(r.bytes),
                         buffer_capacity(opts_, plan_.sizes.back()), agreed.message);
  emit(r);
  code_ = more_severe(code_, agreed.code);
  return nullptr;
}

void Runner::abort_on_timeout(RunRecord row, const std::string& message) {
  // Printed before the row goes out: a group's rank 0 hands it to world rank 0, which ends the job.
  const std::string note = group_ranks_note();
  fmt::print(stderr, "ccbench: {}: timeout: {}{}; ending the run with exit code 5\n", who(), message, note);
  std::fflush(stderr);
  if (rank_ == 0 && sink_) {
    row.status = RowStatus::failed;
    row.reason = message + note;
    sink_->add_last(row);
  }
  guard_.end_job({.exit_code = static_cast<int>(ExitCode::timeout),
                  .reason = "timeout: " + message,
                  .verdict = "FAILED: timeout",
                  .message = "",      // printed above
                  .abort_mpi = true,  // the main thread: MPI_Abort is allowed here
                  .rank0_grace = rank0_grace_for_timeout(opts_.timeout)});
}

// ---------------------------------------------------------------------------------------------
// One case: every size, out-of-place and in-place.
// ---------------------------------------------------------------------------------------------

void Runner::run_case(ImplState& st, Series& bufs, const CaseSpec& spec) {
  std::vector<bool> variants;
  if (opts_.in_place != InPlaceChoice::yes) variants.push_back(false);
  if (opts_.in_place != InPlaceChoice::no) {
    if (supports_in_place(spec.coll)) {
      variants.push_back(true);
    } else {
      RunRecord r = base_record(st, spec);
      r.in_place = true;
      r.status = RowStatus::skipped;
      r.reason = fmt::format("{} has no in-place form", name(spec.coll));
      emit(r);
    }
  }
  for (std::uint64_t size : plan_.sizes) {
    for (bool in_place : variants) {
      Measurement m = plan_measurement(bufs, spec, size, in_place);
      if (!measure(st, bufs, m)) return;
    }
  }
}

// The pointers of one measurement; `out` is where the result lands. With -u every buffer starts
// that many elements into its guarded allocation.
Runner::Measurement Runner::plan_measurement(Series& bufs, const CaseSpec& spec, std::uint64_t size,
                                             bool in_place) const {
  Measurement m;
  m.spec = spec;
  m.size = size;
  m.shape = shape_for_bytes(spec.coll, spec.dtype, nranks_, size);
  m.in_place = in_place;
  m.esz = element_size(spec.dtype);
  m.offset = static_cast<std::size_t>(opts_.misalign) * m.esz;
  m.send_bytes = m.shape.send_elements * m.esz;
  m.recv_bytes = m.shape.recv_elements * m.esz;
  m.pat =
      PatternSpec{spec.coll, spec.dtype, spec.op, opts_.seed, rank_, nranks_, spec.root, m.shape.count, opts_.pattern};
  m.S = bufs.send.data() + m.offset;
  m.R = bufs.recv.data() + m.offset;
  m.buffers = call_buffers(spec.coll, in_place, m.S, m.R, rank_, m.shape.count, m.esz);
  m.send = m.buffers.send;
  m.recv = m.out = m.buffers.recv;
  m.checked = output_elements(spec.coll, rank_, spec.root, m.shape);
  m.iter_us.assign(static_cast<size_t>(opts_.iterations), 0.0);
  return m;
}

// A size that cannot run is a skipped row; otherwise the phases, then the agreement.
bool Runner::measure(ImplState& st, Series& bufs, Measurement& m) {
  RunRecord row = base_record(st, m.spec);
  row.bytes = m.shape.count ? m.shape.bytes : m.size;  // a size of no whole element keeps the size asked
  row.count = m.shape.count;
  row.in_place = m.in_place;
  std::optional<std::string> why;
  if (m.shape.count == 0) why = fmt::format("{} B is less than one {} element per rank", m.size, name(m.spec.dtype));
  else why = st.impl->unsupported_count(m.spec, m.shape.count);
  if (why) {
    row.status = RowStatus::skipped;
    row.reason = *why;
    emit(row);
    return true;
  }
  m.where = fmt::format("{} {} {}", case_name(m.spec, st.info->name), format_size(m.shape.bytes),
                        m.in_place ? "in-place" : "out-of-place");
  m.graphs = opts_.graph_launches > 0 && st.impl->graph_capturable();
  Implementation& impl = *st.impl;
  slow_ms_ = slow_fault_ms(st.info->name, m.size);
  Outcome local = run_catching([&] {
    for (RunnerHook* h : hooks_) h->begin_row();  // never inside the timed loop
    prepare(bufs, m);
    warm_up(impl, m);
    timed_phases(st, bufs, m);
    Calls calls(*this, impl, bufs, m);
    for (RunnerHook* h : hooks_) h->extra_phase(calls);
    if (m.graphs) graph_replays(impl, bufs, m);
    damage_send_buffer(st.info->name, m);
    // Out of place the input is never restored: one look after the last call covers them all.
    if (opts_.check && !m.in_place) check_send_buffer(m);
    check_guards(bufs, m);
  });
  backend_.drop_capture();
  if (!fault_refusal_.empty() && local.code == ExitCode::ok)
    local = {ExitCode::usage, std::exchange(fault_refusal_, "")};
  row.transport = impl.transport();  // what the calls connected over (NCCL connects at its first call)
  return agree(m, std::move(row), local);
}

// ---------------------------------------------------------------------------------------------
// The phases, on this rank.
// ---------------------------------------------------------------------------------------------

void Runner::call(Implementation& impl, const CallArgs& args, int collectives) {
  watchdog_.arrive();
  impl.run_aggregated(args, collectives);
  if (slow_ms_ > 0) backend_.delay(slow_ms_);  // this rank's part of the call ends late
}

void Runner::barrier() {
  watchdog_.arrive();
  check_mpi(MPI_Barrier(base_.comm), "MPI_Barrier");
}

void Runner::sync(Implementation& impl) {
  backend_.synchronize();
  impl.check_async_errors();
}

void Runner::reset(Series& bufs, const Measurement& m) {
  if (m.buffers.poison_recv) backend_.complement(m.R, bufs.expected.data(), m.recv_bytes);
  if (m.buffers.restore_at) backend_.copy(m.buffers.restore_at, bufs.pristine.data(), m.send_bytes);
}

void Runner::prepare(Series& bufs, Measurement& m) {
  watchdog_.enter(m.where + ": preparing buffers");
  backend_.fill_input(m.pat, bufs.pristine.data(), m.shape.send_elements, 0);
  backend_.fill_expected(m.pat, bufs.expected.data(), m.shape.recv_elements);
  if (!m.in_place) backend_.copy(m.S, bufs.pristine.data(), m.send_bytes);
  reset(bufs, m);
  // In place, the result may land in the send buffer (reduce-scatter) or the receive buffer.
  bufs.send.arm(m.offset, !m.in_place || m.buffers.out_in_send ? m.send_bytes : 0);
  bufs.recv.arm(m.offset, m.buffers.out_in_send ? 0 : m.recv_bytes);
  backend_.synchronize();
}

void Runner::warm_up(Implementation& impl, Measurement& m) {
  watchdog_.enter(m.where + ": warm-up", {}, static_cast<std::uint64_t>(opts_.warmup));
  for (int i = 0; i < opts_.warmup; ++i) {
    if (i == 0) impl.probe_begin();
    call(impl, m.args(), opts_.agg_iters);
    if (i == 0) {
      sync(impl);
      m.algorithm = impl.describe(m.args());
    }
  }
  sync(impl);
}

void Runner::timed_phases(ImplState& st, Series& bufs, Measurement& m) {
  // Every hook whose begin_timed() was called hears end_timed(), also when it or the phases throw.
  struct Begun {
    std::vector<RunnerHook*> hooks;
    bool done = false;
    ~Begun() {
      if (!done)
        for (RunnerHook* h : hooks) run_catching([&] { h->end_timed(false); });
    }
  } begun;
  for (RunnerHook* h : hooks_) {
    begun.hooks.push_back(h);
    h->begin_timed();
  }
  timed_batch(*st.impl, bufs, m);
  single_iterations(st, bufs, m);
  begun.done = true;
  for (RunnerHook* h : hooks_) h->end_timed(true);
}

// Back-to-back batch: the nccl-tests-comparable figure.
void Runner::timed_batch(Implementation& impl, Series& bufs, Measurement& m) {
  // Before the barrier: enter() may do work (watchdog.h). The barrier and -n calls.
  watchdog_.enter(m.where + ": timed batch", {}, static_cast<std::uint64_t>(opts_.iterations) + 1);
  if (m.in_place) reset(bufs, m);
  backend_.synchronize();
  barrier();
  for (RunnerHook* h : hooks_) h->begin_batch(base_.stream);  // outside the marks
  backend_.mark(0);
  for (int i = 0; i < opts_.iterations; ++i) call(impl, m.args(), opts_.agg_iters);
  backend_.mark(1);
  for (RunnerHook* h : hooks_) h->end_batch(base_.stream);
  sync(impl);
  m.batch_us = backend_.elapsed_us(0, 1) / (opts_.iterations * opts_.agg_iters);
  if (!opts_.check) return;
  if (!m.in_place || repeats_in_place(m.spec.coll, m.spec.op)) check_output(bufs, m, "after the timed batch", m.wrong);
}

// Single iterations, each started together and checked: the distribution. An iteration of -m N
// collectives counts as N, each taking 1/N of its time; in place, N collectives on their own
// output give another output for most ops, so one more collective alone is checked instead.
void Runner::single_iterations(ImplState& st, Series& bufs, Measurement& m) {
  const bool checkable = opts_.agg_iters == 1 || !m.in_place || repeats_in_place(m.spec.coll, m.spec.op);
  for (int i = 0; i < opts_.iterations; ++i) {
    watchdog_.enter(fmt::format("{}: iteration {}", m.where, i));
    reset(bufs, m);
    backend_.synchronize();
    barrier();
    const bool fault =
        opts_.fault && opts_.fault->kind != FaultSpec::Kind::corrupt_send && fault_here(st.info->name, m.size, i);
    if (fault) inject_before(*opts_.fault);
    // GPU: the collective is queued behind a short spin, so its time holds no launch latency.
    backend_.head_start(kHeadStartUs);
    backend_.mark(0);
    call(*st.impl, m.args(), opts_.agg_iters);
    backend_.mark(1);
    sync(*st.impl);
    m.iter_us[static_cast<size_t>(i)] = backend_.elapsed_us(0, 1) / opts_.agg_iters;
    if (fault) {
      fault_fired_ = true;
      std::byte* end = m.buffers.out_in_send ? m.S + m.send_bytes : m.R + m.recv_bytes;
      if (opts_.fault->kind == FaultSpec::Kind::corrupt)
        fault_refusal_ = index_refusal(*opts_.fault, m.checked, who() + "'s output", m.where);
      inject_after(*opts_.fault, backend_, m.out, m.checked, m.esz, end);
    }
    if (opts_.check && checkable) check_output(bufs, m, fmt::format("iteration {}", i), m.wrong);
  }
  if (opts_.check && !checkable) check_alone(*st.impl, bufs, m);
}

void Runner::check_alone(Implementation& impl, Series& bufs, Measurement& m) {
  watchdog_.enter(m.where + ": checked collective");
  reset(bufs, m);
  backend_.synchronize();
  barrier();
  call(impl, m.args(), 1);
  sync(impl);
  check_output(bufs, m, "a collective alone after the aggregated iterations", m.wrong);
}

// CUDA graph of -n iterations, replayed -G times; each replay is a sample.
void Runner::graph_replays(Implementation& impl, Series& bufs, Measurement& m) {
  watchdog_.enter(m.where + ": CUDA-graph capture");
  reset(bufs, m);
  backend_.synchronize();
  impl.probe_begin();
  backend_.begin_capture();
  for (int i = 0; i < opts_.iterations; ++i) call(impl, m.args(), opts_.agg_iters);
  backend_.end_capture();
  m.graph_algorithm = impl.describe(m.args());
  backend_.replay();  // warm-up launch
  sync(impl);
  watchdog_.enter(m.where + ": CUDA-graph replay");  // before the barrier: enter() may do work
  reset(bufs, m);
  backend_.synchronize();
  barrier();
  for (int g = 0; g < opts_.graph_launches; ++g) {
    backend_.mark(0);
    backend_.replay();
    backend_.mark(1);
    sync(impl);
    m.graph_us.push_back(backend_.elapsed_us(0, 1) / (opts_.iterations * opts_.agg_iters));
  }
  backend_.drop_capture();
  if (graph_checked(m)) check_output(bufs, m, "after the CUDA-graph replays", m.graph_wrong);
}

bool Runner::graph_checked(const Measurement& m) const {
  return opts_.check && (!m.in_place || repeats_in_place(m.spec.coll, m.spec.op));
}

void Runner::check_output(Series& bufs, Measurement& m, const std::string& when, std::int64_t& counter) {
  Mismatches w = backend_.compare(m.pat, bufs.expected.data(), m.out, m.checked);
  if (w.wrong && m.first_wrong.empty())
    m.first_wrong = fmt::format("{}, {}: element {} expected {} got {} ({} wrong)", who(), when, w.first_index,
                                w.expected, w.actual, w.wrong);
  counter += static_cast<std::int64_t>(w.wrong);
}

// CCBENCH_FAULT corrupt_send: out of place, a collective that wrote into its input after reading
// it for the last time. Every output stays right; only the send buffer's check can tell.
void Runner::damage_send_buffer(const std::string& impl, const Measurement& m) {
  const auto& f = opts_.fault;
  if (m.in_place || !f || f->kind != FaultSpec::Kind::corrupt_send || !fault_here(impl, m.size, f->iteration)) return;
  fault_fired_ = true;
  fault_refusal_ = index_refusal(*f, m.shape.send_elements, who() + "'s send buffer", m.where);
  if (!fault_refusal_.empty()) return;
  std::byte* e = m.S + f->index * m.esz;
  backend_.complement(e, e, m.esz);
  backend_.synchronize();
}

void Runner::check_send_buffer(Measurement& m) {
  Mismatches w = backend_.check_input(m.pat, m.S, m.shape.send_elements, 0);
  if (w.wrong && m.first_wrong.empty())
    m.first_wrong = fmt::format("{}: the send buffer was modified: element {} expected {} got {}", who(), w.first_index,
                                w.expected, w.actual);
  m.wrong += static_cast<std::int64_t>(w.wrong);
}

// Guard regions are checked whatever -c says: a write past a buffer is never waved through.
void Runner::check_guards(Series& bufs, Measurement& m) {
  m.damaged = static_cast<std::int64_t>(bufs.send.damaged() + bufs.recv.damaged());
  if (m.damaged)
    m.first_wrong = fmt::format("{}: {} guard bytes around the buffers were overwritten{}{}", who(), m.damaged,
                                m.first_wrong.empty() ? "" : "; ", m.first_wrong);
}

// ---------------------------------------------------------------------------------------------
// Agreement and rows.
// ---------------------------------------------------------------------------------------------

bool Runner::agree(Measurement& m, RunRecord row, const Outcome& local) {
  // A deadline that expired here means a peer is stuck or gone: agreeing with it would hang
  // too. Report what this rank waited for, keep the rows, and end the job with exit code 5.
  if (local.code == ExitCode::timeout) abort_on_timeout(row, m.where + ": " + local.message);

  // Every rank takes part in what follows, whatever happened above. A rank whose own call failed
  // says how while it waits: where the failure was a peer's death, this wait times out too, and
  // its reason must still carry what this rank saw (a provider's error naming the peer).
  watchdog_.enter(m.where + ": agreeing on the results" +
                  (local.code == ExitCode::ok ? std::string() : " after this rank's error: " + local.message));
  const Outcome agreed = agree_outcome(base_.comm, local);
  if (agreed.code != ExitCode::ok) {
    row.status = RowStatus::failed;
    row.reason = agreed.message;
    emit(row);
    code_ = more_severe(code_, agreed.code);
    if (agreed.code != ExitCode::runtime && agreed.code != ExitCode::timeout) return true;
    // e.g. out of memory at this size is not fatal: the next size or case may still run
    stop_ = true;
    stop_reason_ = fmt::format("{} failed: {}", m.where, row.reason);
    return false;
  }
  RankTimes own = gather_rank_times(base_.comm, m.batch_us, summarize(m.iter_us).median);
  set_rank_columns(row, std::move(own), base_.layout->host_of);
  if (row.slowest_rank && !world_ranks_.empty())
    row.slowest_rank = world_ranks_.at(static_cast<size_t>(*row.slowest_rank));
  m.batch_us = over_ranks(base_.comm, std::vector<double>{m.batch_us}, opts_.rank_time).front();
  m.iter_us = over_ranks(base_.comm, m.iter_us, opts_.rank_time);
  if (m.graphs) m.graph_us = over_ranks(base_.comm, m.graph_us, opts_.rank_time);
  const auto counts = sum_over_ranks(base_.comm, std::array<std::int64_t, 3>{m.wrong, m.graph_wrong, m.damaged});
  for (RunnerHook* h : hooks_) h->end_row(base_.comm, m.where, row);  // collective, like the agreement above
  emit_measured(m, std::move(row), counts[0], counts[1], counts[2], gather_strings(base_.comm, m.first_wrong));
  return true;
}

void Runner::emit_measured(Measurement& m, RunRecord row, std::int64_t wrong, std::int64_t graph_wrong,
                           std::int64_t damaged, const std::vector<std::string>& descriptions) {
  const double factor = bus_factor(m.spec.coll, nranks_);
  std::string first;
  for (const std::string& d : descriptions)
    if (!d.empty()) {
      first = d;
      break;
    }
  row.algorithm = m.algorithm;
  set_times(row, summarize(m.iter_us), m.batch_us, factor);
  // Guard damage counts whatever -c says; wrong elements only where they were checked.
  row.wrong = opts_.check ? std::optional<std::int64_t>(wrong + damaged)
              : damaged   ? std::optional<std::int64_t>(damaged)
                          : std::nullopt;
  settle(row, first, opts_.check ? "" : kNotCheckedReason);
  emit(row);
  if (!m.graphs) return;

  RunRecord g = row;
  const TimeStats gt = summarize(m.graph_us);
  g.mode = "graph";
  clear_rank_columns(g);  // they hold the eager calls' per-rank times
  for (RunnerHook* h : hooks_) h->graph_row(g);
  g.algorithm = m.graph_algorithm;
  g.iterations = opts_.iterations * opts_.graph_launches;
  set_times(g, gt, gt.mean, factor);
  g.wrong = graph_checked(m) ? std::optional<std::int64_t>(graph_wrong) : std::nullopt;
  settle(g, graph_wrong ? first : "", opts_.check ? kGraphNotCheckedReason : kNotCheckedReason);
  emit(g);
}

}  // namespace ccbench
