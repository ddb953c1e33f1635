#include "collectives/cpu/executor.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "transports/wait.h"

namespace ccbench {

std::atomic<bool> cpu_abort_requested{false};
std::atomic<bool> cpu_oversubscribed{false};

namespace {

using Clock = std::chrono::steady_clock;

// Pauses between looks at the clock and the abort flag: a clock read per failed poll would cost
// more than the poll.
constexpr std::uint64_t kPausesPerCheck = 256;

std::string stuck(std::span<Flow* const> flows) {
  std::string s;
  int listed = 0, more = 0;
  for (Flow* f : flows) {
    if (f->done()) continue;
    const std::string w = f->waiting_for();
    if (w.empty()) continue;
    if (listed == 4) {
      ++more;
      continue;
    }
    s += (listed++ ? "; " : "") + w;
  }
  if (more) s += fmt::format("; and {} more", more);
  return s;
}

}  // namespace

void run_flows(std::span<Flow* const> flows, std::chrono::milliseconds timeout, int rank, std::string_view what) {
  if (cpu_abort_requested.load(std::memory_order_relaxed))
    fail(ExitCode::timeout, "aborted: {}: rank {} had not started", what, rank);
  Backoff backoff(cpu_oversubscribed.load(std::memory_order_relaxed) ? 0 : Backoff::kSpins, Backoff::kYields);
  auto last_progress = Clock::now();
  bool progressed = false;
  for (;;) {
    bool any = false, all_done = true;
    try {
      for (Flow* f : flows) {
        if (f->done()) continue;
        any = f->advance() || any;
        all_done = all_done && f->done();
      }
    } catch (const Error& e) {
      throw e.with_context(fmt::format("{}: rank {}", what, rank));
    }
    if (all_done) return;
    if (any) {
      backoff.reset();
      progressed = true;
      continue;
    }
    backoff.pause();
    if (backoff.polls() % kPausesPerCheck != 0) continue;
    if (cpu_abort_requested.load(std::memory_order_relaxed))
      fail(ExitCode::timeout, "aborted: {}: rank {} was waiting for {}", what, rank, stuck(flows));
    const auto now = Clock::now();
    if (progressed) {
      last_progress = now;
      progressed = false;
    } else if (now - last_progress > timeout) {
      fail(ExitCode::timeout, "{}: rank {} waited {:.3g} s for {}", what, rank,
           std::chrono::duration<double>(now - last_progress).count(), stuck(flows));
    }
  }
}

namespace {

// The caller's memory a move's sends can go from (Move's comment), or nullptr.
const void* direct_source(const Move& m) {
  if (m.out) return m.out;
  if (m.nfrom == 0 && m.in && !m.finalize) return m.in;
  return nullptr;
}

// The reduction of `m` into `out` and the slots of its sends without a zero-copy end, which are
// posted; received slots released. False, with nothing done, while a slot is missing.
bool reduce_move(Move& m, const ReduceKernels& k, const void* direct_from, MoveWait* wait) {
  const size_t bytes = m.count * k.element_bytes();
  const void* src[kMaxReduceSrc];
  void* dst[kMaxReduceDst];
  int ns = 0, nd = 0;
  if (m.in) src[ns++] = m.in;
  for (int i = 0; i < m.nfrom; ++i) {
    size_t got = 0;
    const void* p = m.from[i]->try_peek(&got);
    if (!p) {
      *wait = {true, m.from_rank[i]};
      return false;
    }
    if (got != bytes)
      fail(ExitCode::runtime,
           "received {} bytes from rank {} where the schedule expects {} (do all ranks use the "
           "same CCBENCH_CPU_SLOT_BYTES?)",
           got, m.from_rank[i], bytes);
    src[ns++] = p;
  }
  if (m.out) dst[nd++] = m.out;
  unsigned direct = 0;
  for (int i = 0; i < m.nto; ++i) {
    if (direct_from && m.to[i]->direct()) {
      direct |= 1u << i;
      continue;
    }
    void* p = m.to[i]->try_acquire();
    if (!p) {
      *wait = {false, m.to_rank[i]};
      return false;
    }
    dst[nd++] = p;
  }
  if (nd > 0) k.reduce_multi(dst, nd, src, ns, m.count, m.finalize);
  for (int i = 0; i < m.nto; ++i)
    if (!(direct & (1u << i))) m.to[i]->post(bytes);
  for (int i = 0; i < m.nfrom; ++i) m.from[i]->release();
  m.reduced = true;
  m.direct_left = direct;
  return true;
}

}  // namespace

bool try_move(Move& m, const ReduceKernels& k, MoveWait* wait) {
  const void* from = direct_source(m);
  if (!m.reduced && !reduce_move(m, k, from, wait)) return false;
  const size_t bytes = m.count * k.element_bytes();
  for (int i = 0; i < m.nto; ++i) {
    const unsigned bit = 1u << i;
    if ((m.direct_left & bit) && m.to[i]->direct()->try_post_from(from, bytes)) m.direct_left &= ~bit;
  }
  for (int i = 0; i < m.nto; ++i)
    if (m.direct_left & (1u << i)) {
      *wait = {false, m.to_rank[i]};
      return false;
    }
  return true;
}

bool MoveFlow::advance() {
  if (!have_) {
    if (!next(cur_)) {
      done_ = true;
      return true;
    }
    have_ = true;
  }
  const bool reduced = cur_.reduced;
  if (!try_move(cur_, kernels_, &wait_)) return cur_.reduced != reduced;
  have_ = false;
  return true;
}

StreamFlow::StreamFlow(const ReduceKernels& k, const void* in, void* out, size_t count, size_t slice, SendChannel* to,
                       RecvChannel* from, int peer, std::string what)
    : MoveFlow(k), in_(in), out_(out), count_(count), slice_(slice), esz_(k.element_bytes()),
      pieces_((count + slice - 1) / slice), to_(to), from_(from), peer_(peer), what_(std::move(what)) {}

bool StreamFlow::next(Move& m) {
  if (piece_ == pieces_) return false;
  const size_t off = piece_++ * slice_;
  m = Move{};
  m.count = std::min(slice_, count_ - off);
  if (to_) {
    m.in = static_cast<const char*>(in_) + off * esz_;
    m.send_to(to_, peer_);
  } else {
    m.out = static_cast<char*>(out_) + off * esz_;
    m.recv_from(from_, peer_);
  }
  return true;
}

std::string StreamFlow::where() const { return fmt::format("{} piece {} of {}", what_, piece_ - 1, pieces_); }

std::string MoveFlow::waiting_for() const {
  if (!have_) return fmt::format("its next step ({})", where());
  if (wait_.recv) return fmt::format("data from rank {} ({})", wait_.rank, where());
  return fmt::format("a free slot toward rank {}, which has not taken earlier data ({})", wait_.rank, where());
}

DrainFlow::DrainFlow(std::vector<SendChannel*> channels, std::vector<int> peers, std::vector<const Flow*> after)
    : channels_(std::move(channels)), peers_(std::move(peers)), after_(std::move(after)) {}

bool DrainFlow::advance() {
  for (const Flow* f : after_)
    if (!f->done()) return false;
  const size_t before = next_;
  while (next_ < channels_.size() && channels_[next_]->try_drain()) ++next_;
  return next_ != before;
}

std::string DrainFlow::waiting_for() const {
  for (const Flow* f : after_)
    if (!f->done()) return {};  // not what holds the run up
  return fmt::format("rank {} to take the last data sent to it", peers_[next_]);
}

}  // namespace ccbench
