#include "harness/runner.h"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "harness/bootstrap.h"
#include "harness/sizes.h"
#include "results/error.h"
#include "results/stats.h"

namespace ccbench {

namespace {

// Bytes of canary around every buffer; a write past the end of the data lands in them.
constexpr std::size_t kGuardBytes = 64 * 1024;
constexpr std::uint8_t kGuardValue = 0xC5;
// Head start of single timed GPU iterations: longer than the host needs to queue a collective.
constexpr double kHeadStartUs = 200.0;

// Whether repeating the collective on its own output gives the same output again, so that the
// data of back-to-back in-place iterations can be checked.
bool idempotent(const CaseSpec& s) {
  if (!has_reduce_op(s.coll)) return s.coll != Collective::sendrecv;
  return s.op == ReduceOp::min || s.op == ReduceOp::max;
}

// A device buffer with a guard region before and after the data; the trailing guard follows the
// bytes in use by the current measurement.
class GuardedBuffer {
 public:
  GuardedBuffer(Backend& b, Allocator* a, std::size_t capacity) : b_(b), a_(a), capacity_(capacity) {
    std::size_t total = capacity + 2 * kGuardBytes;
    raw_ = a_ ? a_->allocate(total) : b_.allocate(total);
    b_.fill_bytes(raw_, kGuardBytes, kGuardValue);
  }
  ~GuardedBuffer() {
    if (a_) a_->release(raw_);
    else b_.release(raw_);
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  std::byte* data() const { return static_cast<std::byte*>(raw_) + kGuardBytes; }
  std::size_t capacity() const { return capacity_; }
  void arm(std::size_t used) {
    used_ = used;
    b_.fill_bytes(data() + used, kGuardBytes, kGuardValue);
  }
  // Damaged guard bytes before the data and after the bytes in use.
  std::uint64_t damaged() {
    return b_.count_bytes_not(raw_, kGuardBytes, kGuardValue) + b_.count_bytes_not(data() + used_, kGuardBytes, kGuardValue);
  }

 private:
  Backend& b_;
  Allocator* a_;
  std::size_t capacity_;
  std::size_t used_ = 0;
  void* raw_ = nullptr;
};

double max_over_ranks(MPI_Comm comm, double v) {
  double out = v;
  mpi_check(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce of times");
  return out;
}

std::vector<double> max_over_ranks(MPI_Comm comm, std::vector<double> v) {
  std::vector<double> out(v.size());
  mpi_check(MPI_Allreduce(v.data(), out.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, comm),
            "MPI_Allreduce of iteration times");
  return out;
}

std::int64_t sum_over_ranks(MPI_Comm comm, std::int64_t v) {
  std::int64_t out = v;
  mpi_check(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_SUM, comm), "MPI_Allreduce of wrong counts");
  return out;
}

std::string case_name(const CaseSpec& s, const std::string& impl) {
  std::string n = fmt::format("{}/{} {}", name(s.coll), impl, name(s.dtype));
  if (has_reduce_op(s.coll)) n += fmt::format(" {}", name(s.op));
  return n;
}

// Faults that act before the collective: a hang, a crash, a slow rank.
void inject_before(const FaultSpec& f) {
  switch (f.kind) {
    case FaultSpec::Kind::stop: std::raise(SIGSTOP); break;
    case FaultSpec::Kind::kill: std::raise(SIGKILL); break;
    case FaultSpec::Kind::delay: std::this_thread::sleep_for(std::chrono::milliseconds(f.ms)); break;
    default: break;
  }
}

// Faults that damage data after the collective: one wrong element, or bytes past the end.
void inject_after(const FaultSpec& f, Backend& b, std::byte* out, size_t elements, size_t esz, std::byte* used_end) {
  if (f.kind == FaultSpec::Kind::corrupt && elements > 0) {
    std::byte* e = out + std::min<std::uint64_t>(f.index, elements - 1) * esz;
    b.complement(e, e, esz);
  } else if (f.kind == FaultSpec::Kind::overrun) {
    b.fill_bytes(used_end, f.bytes, 0x5A);
  }
  b.synchronize();
}

}  // namespace

// An implementation once set up, kept for the whole run.
struct Runner::ImplState {
  const ImplInfo* info = nullptr;
  std::unique_ptr<Implementation> impl;
  ImplContext ctx;
  bool usable = false;
  std::string failure;  // why set-up failed
};

// The buffers of one (collective, implementation) series: send S, receive R (from the
// implementation's allocator), expected output E and pristine input P (plain device memory).
struct Runner::Series {
  Series(Backend& b, Allocator* a, std::size_t cap)
      : send(b, a, cap), recv(b, a, cap), expected(b, nullptr, cap), pristine(b, nullptr, cap) {}
  GuardedBuffer send, recv, expected, pristine;
};

Runner::Runner(const RunOptions& opts, SweepPlan plan, const ImplContext& base, Backend& backend, ResultSink* sink,
               Watchdog& watchdog)
    : opts_(opts), plan_(std::move(plan)), base_(base), backend_(backend), sink_(sink), watchdog_(watchdog) {
  MPI_Comm_rank(base_.comm, &rank_);
  MPI_Comm_size(base_.comm, &nranks_);
}

Runner::~Runner() = default;

bool Runner::fault_here(const std::string& impl, std::uint64_t size, int iteration) const {
  const auto& f = opts_.fault;
  if (!f || fault_fired_ || f->rank != rank_) return false;
  if (!f->impl.empty() && f->impl != impl) return false;
  if (f->size && *f->size != size) return false;
  return f->kind == FaultSpec::Kind::alloc || iteration == f->iteration;
}

void Runner::emit(RunRecord row) {
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
  r.warmup = opts_.warmup;
  r.iterations = opts_.iterations;
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
    st->impl->setup(st->ctx);
  }));
  st->usable = agreed.code == ExitCode::ok;
  if (!st->usable) {
    st->failure = agreed.message;
    code_ = more_severe(code_, agreed.code);
  }
  std::lock_guard lock(impls_mutex_);
  impls_.push_back(std::move(st));
  return impls_.back().get();
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
  for (int cycle = 0; !stop_ && (opts_.cycles == 0 || cycle < opts_.cycles); ++cycle) {
    const size_t first_row = rows_.size();
    for (Collective coll : opts_.collectives) {
      run_collective(coll);
      if (stop_) break;
    }
    if (opts_.cycles != 1 && rank_ == 0) {  // burn-in: errors per cycle
      std::int64_t wrong = 0, bad_rows = 0, failed = 0;
      for (size_t i = first_row; i < rows_.size(); ++i) {
        if (rows_[i].wrong > 0) wrong += rows_[i].wrong, ++bad_rows;
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
    if (!st->usable) {
      CaseSpec spec{coll, opts_.dtypes.front(), opts_.ops.front(), opts_.root};
      RunRecord r = base_record(*st, spec);
      r.status = RowStatus::failed;
      r.reason = "set-up failed: " + st->failure;
      emit(r);
      continue;
    }
    // Which (dtype, op) cases this implementation can run; the others are reported as skipped.
    std::vector<CaseSpec> cases;
    std::vector<ReduceOp> ops = has_reduce_op(coll) ? opts_.ops : std::vector<ReduceOp>{ReduceOp::none};
    for (DataType t : opts_.dtypes) {
      for (ReduceOp op : ops) {
        CaseSpec spec{coll, t, op, opts_.root};
        std::optional<std::string> why;
        if (has_root(coll) && opts_.root >= nranks_)
          why = fmt::format("root {} does not exist with {} ranks (valid: 0 to {})", opts_.root, nranks_, nranks_ - 1);
        else
          why = st->impl->unsupported(spec, st->ctx);
        if (why) {
          RunRecord r = base_record(*st, spec);
          r.status = RowStatus::skipped;
          r.reason = *why;
          emit(r);
        } else {
          cases.push_back(spec);
        }
      }
    }
    if (cases.empty()) continue;

    // One buffer set for the series: the largest size fits every dtype.
    std::unique_ptr<Series> series;
    watchdog_.enter(fmt::format("{}/{}: buffer allocation and registration", name(coll), info->name));
    const Outcome agreed = agree_outcome(base_.comm, run_catching([&] {
      if (fault_here(info->name, plan_.sizes.back(), 0) && opts_.fault->kind == FaultSpec::Kind::alloc) {
        fault_fired_ = true;
        fail(ExitCode::precondition, "out of memory: allocation failure injected by CCBENCH_FAULT on rank {}", rank_);
      }
      series = std::make_unique<Series>(backend_, st->impl->allocator(), plan_.sizes.back());
      st->impl->attach(BufferSet{series->send.data(), series->send.capacity(), series->recv.data(),
                                 series->recv.capacity()});
    }));
    if (agreed.code != ExitCode::ok) {
      RunRecord r = base_record(*st, cases.front());
      r.status = RowStatus::failed;
      r.reason = "buffers: " + agreed.message;
      emit(r);
      code_ = more_severe(code_, agreed.code);
      series.reset();
      continue;
    }
    for (const CaseSpec& spec : cases) {
      run_case(*st, *series, spec);
      if (stop_) break;
    }
    st->impl->detach();
    series.reset();
    if (stop_) return;
  }
}

void Runner::abort_on_timeout(RunRecord row, const std::string& message) {
  fmt::print(stderr, "ccbench: rank {} (host {}): timeout: {}; ending the run with exit code 5\n", rank_,
             base_.layout->host(), message);
  if (rank_ == 0) {
    row.status = RowStatus::failed;
    row.reason = message;
    if (sink_) {
      sink_->add(row);
      sink_->finish({false, "timeout: " + message, static_cast<int>(ExitCode::timeout), "FAILED: timeout"});
    }
  }
  std::fflush(nullptr);
  MPI_Abort(base_.comm, static_cast<int>(ExitCode::timeout));
  std::_Exit(static_cast<int>(ExitCode::timeout));
}

void Runner::run_case(ImplState& st, Series& bufs, const CaseSpec& spec) {
  Implementation& impl = *st.impl;
  const size_t esz = element_size(spec.dtype);
  const std::string cname = case_name(spec, st.info->name);
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
    const CollectiveShape shape = shape_for_bytes(spec.coll, spec.dtype, nranks_, size);
    for (bool in_place : variants) {
      RunRecord row = base_record(st, spec);
      row.bytes = shape.bytes;
      row.count = shape.count;
      row.in_place = in_place;
      if (shape.count == 0) {
        row.status = RowStatus::skipped;
        row.reason = fmt::format("{} B is less than one {} element per rank", size, name(spec.dtype));
        emit(row);
        continue;
      }
      if (auto why = impl.unsupported_count(spec, shape.count)) {
        row.status = RowStatus::skipped;
        row.reason = *why;
        emit(row);
        continue;
      }
      const std::string where =
          fmt::format("{} {} {}", cname, format_size(shape.bytes), in_place ? "in-place" : "out-of-place");
      PatternSpec pat{spec.coll, spec.dtype, spec.op, opts_.seed, rank_, nranks_, spec.root, shape.count};
      const size_t send_bytes = shape.send_elements * esz, recv_bytes = shape.recv_elements * esz;

      // Pointers of this measurement; `out` is where the result lands (shape.recv_elements).
      std::byte* S = bufs.send.data();
      std::byte* R = bufs.recv.data();
      const void* send = S;
      void* recv = R;
      std::byte* out = R;
      if (in_place) {
        switch (spec.coll) {
          case Collective::allgather: send = R + in_place_send_offset(spec.coll, rank_, shape.count) * esz; break;
          case Collective::reducescatter:
            send = S;
            recv = out = S + in_place_recv_offset(spec.coll, rank_, shape.count) * esz;
            break;
          default: send = R; break;
        }
      }
      // Puts the input in place and poisons the output before an iteration.
      auto reset = [&] {
        if (!in_place) {
          backend_.complement(R, bufs.expected.data(), recv_bytes);
        } else if (spec.coll == Collective::allgather) {
          backend_.complement(R, bufs.expected.data(), recv_bytes);
          backend_.copy(const_cast<void*>(send), bufs.pristine.data(), send_bytes);
        } else if (spec.coll == Collective::reducescatter) {
          backend_.copy(S, bufs.pristine.data(), send_bytes);
        } else {
          backend_.copy(R, bufs.pristine.data(), send_bytes);
        }
      };
      const CallArgs args{spec, send, recv, shape.count};
      // Each call is counted on the progress board first: a stuck run can name who is behind.
      auto run_call = [&] {
        watchdog_.arrive();
        impl.run(args);
      };
      auto barrier = [&] {
        watchdog_.arrive();
        mpi_check(MPI_Barrier(base_.comm), "MPI_Barrier");
      };
      auto sync = [&] {
        backend_.synchronize();
        impl.check_async_errors();
      };

      std::int64_t wrong = 0;
      std::string first_wrong;
      std::int64_t graph_wrong = 0;
      auto check = [&](const std::string& when, std::int64_t& counter) {
        Mismatches m = backend_.compare(pat, bufs.expected.data(), out, shape.recv_elements);
        if (m.wrong && first_wrong.empty())
          first_wrong = fmt::format("rank {} (host {}), {}: element {} expected {} got {} ({} wrong)", rank_,
                                    base_.layout->host(), when, m.first_index, m.expected, m.actual, m.wrong);
        counter += static_cast<std::int64_t>(m.wrong);
      };

      std::string algorithm, graph_algorithm;  // impl.describe() of the eager and captured calls
      double batch_us = 0;
      std::vector<double> iter_us(static_cast<size_t>(opts_.iterations), 0.0), graph_samples;
      const bool graphs = opts_.graph_launches > 0 && impl.graph_capturable();
      if (telemetry_) telemetry_->begin_row();  // counters before the size; never inside the timed loop
      const Outcome local = run_catching([&] {
        watchdog_.enter(where + ": preparing buffers");
        backend_.fill_input(pat, bufs.pristine.data(), shape.send_elements, 0);
        backend_.fill_expected(pat, bufs.expected.data(), shape.recv_elements);
        if (!in_place) backend_.copy(S, bufs.pristine.data(), send_bytes);
        reset();
        bool buffer_is_send = in_place && spec.coll == Collective::reducescatter;
        bufs.send.arm(!in_place || buffer_is_send ? send_bytes : 0);
        bufs.recv.arm(buffer_is_send ? 0 : recv_bytes);
        backend_.synchronize();

        watchdog_.enter(where + ": warm-up");
        for (int i = 0; i < opts_.warmup; ++i) {
          if (i == 0) impl.probe_begin();
          run_call();
          if (i == 0) {
            sync();
            algorithm = impl.describe(args);
          }
        }
        sync();

        // Back-to-back batch: the nccl-tests-comparable figure.
        if (in_place) reset();
        backend_.synchronize();
        barrier();
        watchdog_.enter(where + ": timed batch");
        backend_.mark(0);
        for (int i = 0; i < opts_.iterations; ++i) run_call();
        backend_.mark(1);
        sync();
        batch_us = backend_.elapsed_us(0, 1) / opts_.iterations;
        if (opts_.check && (!in_place || idempotent(spec))) check("after the timed batch", wrong);
        if (opts_.check && !in_place) {
          Mismatches m = backend_.check_input(pat, S, shape.send_elements, 0);
          if (m.wrong && first_wrong.empty())
            first_wrong = fmt::format("rank {} (host {}): the send buffer was modified: element {} expected {} got {}",
                                      rank_, base_.layout->host(), m.first_index, m.expected, m.actual);
          wrong += static_cast<std::int64_t>(m.wrong);
        }

        // Single iterations, each started together and checked: the distribution.
        for (int i = 0; i < opts_.iterations; ++i) {
          watchdog_.enter(fmt::format("{}: iteration {}", where, i));
          reset();
          backend_.synchronize();
          barrier();
          const bool fault = fault_here(st.info->name, size, i);
          if (fault) inject_before(*opts_.fault);
          // GPU: the collective is queued behind a short spin, so its time holds no launch latency.
          backend_.head_start(kHeadStartUs);
          backend_.mark(0);
          run_call();
          backend_.mark(1);
          sync();
          iter_us[static_cast<size_t>(i)] = backend_.elapsed_us(0, 1);
          if (fault) {
            fault_fired_ = true;
            std::byte* end = (in_place && spec.coll == Collective::reducescatter) ? S + send_bytes : R + recv_bytes;
            inject_after(*opts_.fault, backend_, out, shape.recv_elements, esz, end);
          }
          if (opts_.check) check(fmt::format("iteration {}", i), wrong);
        }

        if (graphs) {
          watchdog_.enter(where + ": CUDA-graph capture");
          reset();
          backend_.synchronize();
          impl.probe_begin();
          backend_.begin_capture();
          for (int i = 0; i < opts_.iterations; ++i) run_call();
          backend_.end_capture();
          graph_algorithm = impl.describe(args);
          backend_.replay();  // warm-up launch
          sync();
          reset();
          backend_.synchronize();
          barrier();
          watchdog_.enter(where + ": CUDA-graph replay");
          for (int g = 0; g < opts_.graph_launches; ++g) {
            backend_.mark(0);
            backend_.replay();
            backend_.mark(1);
            sync();
            graph_samples.push_back(backend_.elapsed_us(0, 1) / opts_.iterations);
          }
          backend_.drop_capture();
          if (opts_.check && (!in_place || idempotent(spec))) check("after the CUDA-graph replays", graph_wrong);
        }

        std::uint64_t damaged = bufs.send.damaged() + bufs.recv.damaged();
        if (damaged) {
          wrong += static_cast<std::int64_t>(damaged);
          first_wrong = fmt::format("rank {} (host {}): {} guard bytes around the buffers were overwritten{}{}", rank_,
                                    base_.layout->host(), damaged, first_wrong.empty() ? "" : "; ", first_wrong);
        }
      });
      backend_.drop_capture();

      // A deadline that expired here means a peer is stuck or gone: agreeing with it would hang
      // too. Report what this rank waited for, keep the rows, and end the job with exit code 5.
      if (local.code == ExitCode::timeout) abort_on_timeout(row, where + ": " + local.message);

      // Every rank takes part in what follows, whatever happened above.
      watchdog_.enter(where + ": agreeing on the results");
      const Outcome agreed = agree_outcome(base_.comm, local);
      if (agreed.code != ExitCode::ok) {
        row.status = RowStatus::failed;
        row.reason = agreed.message;
        emit(row);
        code_ = more_severe(code_, agreed.code);
        if (agreed.code == ExitCode::runtime || agreed.code == ExitCode::timeout) {
          stop_ = true;
          stop_reason_ = fmt::format("{} failed: {}", where, row.reason);
          return;
        }
        continue;  // e.g. out of memory at this size: the next size or case may still run
      }

      batch_us = max_over_ranks(base_.comm, batch_us);
      iter_us = max_over_ranks(base_.comm, iter_us);
      std::int64_t total_wrong = sum_over_ranks(base_.comm, opts_.check ? wrong : 0);
      std::int64_t total_graph_wrong = sum_over_ranks(base_.comm, graph_wrong);
      auto descriptions = gather_strings(base_.comm, first_wrong);
      if (telemetry_) row.health = telemetry_->end_row(where);  // collective, like the agreement above

      const double factor = bus_factor(spec.coll, nranks_);
      TimeStats t = summarize(iter_us);
      row.algorithm = algorithm;
      row.time_avg_us = batch_us;
      row.time_median_us = t.median;
      row.time_min_us = t.min;
      row.time_p95_us = t.p95;
      row.time_max_us = t.max;
      row.time_cv = t.cv;
      row.algbw_gbps = gigabytes_per_second(static_cast<double>(shape.bytes), batch_us);
      row.busbw_gbps = row.algbw_gbps * factor;
      row.busbw_median_gbps = gigabytes_per_second(static_cast<double>(shape.bytes), t.median) * factor;
      row.wrong = opts_.check ? total_wrong : -1;
      if (!opts_.check) row.reason = "not checked (-c 0)";
      if (total_wrong > 0) {
        row.status = RowStatus::wrong;
        for (const std::string& d : descriptions)
          if (!d.empty()) {
            row.reason = d;
            break;
          }
      }
      emit(row);

      if (graphs) {
        std::vector<double> samples = max_over_ranks(base_.comm, graph_samples);
        RunRecord g = row;
        TimeStats gt = summarize(samples);
        g.mode = "graph";
        g.algorithm = graph_algorithm;
        g.iterations = opts_.iterations * opts_.graph_launches;
        g.time_avg_us = gt.mean;
        g.time_median_us = gt.median;
        g.time_min_us = gt.min;
        g.time_p95_us = gt.p95;
        g.time_max_us = gt.max;
        g.time_cv = gt.cv;
        g.algbw_gbps = gigabytes_per_second(static_cast<double>(shape.bytes), gt.mean);
        g.busbw_gbps = g.algbw_gbps * factor;
        g.busbw_median_gbps = gigabytes_per_second(static_cast<double>(shape.bytes), gt.median) * factor;
        const bool graph_checked = opts_.check && (!in_place || idempotent(spec));
        g.wrong = graph_checked ? total_graph_wrong : -1;
        g.status = total_graph_wrong > 0 ? RowStatus::wrong : RowStatus::ok;
        g.reason = graph_checked ? (total_graph_wrong ? row.reason : "")
                                 : "replayed in-place data is not checkable for this op; see the eager row";
        emit(g);
      }
    }
  }
}

}  // namespace ccbench
