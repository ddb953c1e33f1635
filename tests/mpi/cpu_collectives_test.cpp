// The CPU implementations (ring, tree, mpi) under mpirun: every supported collective x data type x
// operation x size x in-place/out-of-place, each output element checked against
// collective_expected(); plus detection of a corrupted input, channel set-up errors, timeouts and
// the abort flag. Every CPU transport is exercised (shm, mpi, tcp). Exits 1 if any rank saw a failure.
//
//   mpirun -np N cpu_collectives_test            correctness (what ctest runs)
//   mpirun -np N cpu_collectives_test --perf     timing of allreduce/allgather, ours against MPI
//                                                (honours CCBENCH_CPU_SLOT_BYTES / _DEPTH)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <mpi.h>

#include "collectives/cpu/cpu_impls.h"
#include "collectives/cpu/executor.h"
#include "collectives/verifiable.h"
#include "core/error.h"
#include "transports/connect.h"

namespace ccbench {
namespace {

int g_rank = 0, g_n = 1;
long g_failures = 0;  // on this rank
long g_checked = 0, g_skipped = 0;

template <typename... Args>
void failure(fmt::format_string<Args...> f, Args&&... args) {
  ++g_failures;
  if (g_failures <= 40) std::fprintf(stderr, "FAIL rank %d: %s\n", g_rank, fmt::format(f, std::forward<Args>(args)...).c_str());
}

template <typename T>
std::string show(T v) {
  if constexpr (is_narrow_float<T>) return fmt::format("{}", v.to_float());
  else if constexpr (sizeof(T) == 1) return fmt::format("{}", static_cast<int>(v));
  else return fmt::format("{}", v);
}

RankLayout layout_from_hosts(const std::function<std::string(int)>& host) {
  std::vector<std::string> hosts;
  for (int r = 0; r < g_n; ++r) hosts.push_back(host(r));
  return RankLayout::from_hosts(g_rank, hosts);
}

RankLayout real_layout() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::vector<char> all(static_cast<size_t>(g_n) * 256);
  MPI_Allgather(name, 256, MPI_CHAR, all.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
  return layout_from_hosts([&](int r) { return std::string(&all[static_cast<size_t>(r) * 256]); });
}

// Host memory with guard bytes on both sides.
class Buffer {
 public:
  static constexpr size_t kGuard = 4096;
  static constexpr unsigned char kGuardByte = 0xA7;
  explicit Buffer(size_t bytes) : bytes_(bytes) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, bytes + 2 * kGuard) != 0) fail(ExitCode::precondition, "out of memory");
    base_.reset(static_cast<unsigned char*>(p));
    std::memset(base_.get(), kGuardByte, kGuard);
    std::memset(base_.get() + kGuard + bytes, kGuardByte, kGuard);
  }
  unsigned char* data() const { return base_.get() + kGuard; }
  bool guards_intact() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (base_.get()[i] != kGuardByte || base_.get()[kGuard + bytes_ + i] != kGuardByte) return false;
    return true;
  }

 private:
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  size_t bytes_;
  std::unique_ptr<unsigned char, Free> base_;
};

struct Case {
  Collective coll;
  DataType dtype;
  ReduceOp op;
  size_t count;
  bool in_place;
  int root;
  std::uint64_t seed;
};

std::string describe(const std::string& impl, const Case& c) {
  return fmt::format("{} {} {} {} count={} {}{}", impl, name(c.coll), name(c.dtype), name(c.op), c.count,
                     c.in_place ? "in-place" : "out-of-place",
                     has_root(c.coll) ? fmt::format(" root={}", c.root) : "");
}

// Runs one case and checks every output element; `corrupt` changes input element
// corrupt_index on rank n-1 first. Returns the number of wrong elements on this rank.
long run_case(Implementation& impl, const std::string& label, const Case& c, long corrupt_index = -1,
              bool report = true) {
  return dispatch_type(c.dtype, [&](auto tag) -> long {
    using T = decltype(tag);
    // Buffers and in-place pointers as the descriptor lays them out (the harness's own rules).
    const CollectiveShape shape = shape_for_count(c.coll, c.dtype, g_n, c.count);
    const size_t send_elems = shape.send_elements, recv_elems = shape.recv_elements;
    const size_t esz = sizeof(T);
    const size_t recv_bytes = (c.in_place ? std::max(send_elems, recv_elems) : recv_elems) * esz;
    Buffer sendbuf(c.in_place ? 0 : send_elems * esz);
    Buffer recvbuf(recv_bytes);
    std::byte* S = reinterpret_cast<std::byte*>(c.in_place ? recvbuf.data() : sendbuf.data());
    std::byte* R = reinterpret_cast<std::byte*>(recvbuf.data());
    const CallBuffers cb = call_buffers(c.coll, c.in_place, S, R, g_rank, c.count, esz);
    T* send = reinterpret_cast<T*>(const_cast<std::byte*>(cb.send));
    T* recv = reinterpret_cast<T*>(cb.recv);
    // Poison the output so that stale data cannot pass, then write the input.
    std::memset(recvbuf.data(), 0xCD, recv_bytes);
    for (size_t i = 0; i < send_elems; ++i)
      send[i] = collective_input<T>(c.coll, c.op, c.seed, g_rank, i, g_n);
    if (corrupt_index >= 0 && g_rank == g_n - 1) {
      T& x = send[corrupt_index];
      if constexpr (is_narrow_float<T>) x.bits ^= sizeof(x) == 1 ? 0x10 : 0x0400;  // an exponent bit
      else x = static_cast<T>(x + 1);
    }

    CallArgs args;
    args.spec = {c.coll, c.dtype, has_reduce_op(c.coll) ? c.op : ReduceOp::none, c.root};
    args.send = send;
    args.recv = recv;
    args.count = c.count;
    impl.run(args);
    ++g_checked;

    long wrong = 0;
    for (size_t j = 0; j < output_elements(c.coll, g_rank, c.root, shape); ++j) {
      const T want = collective_expected<T>(c.coll, c.op, c.seed, g_rank, g_n, c.root, c.count, j);
      if (value_matches<T>(c.op, want, recv[j], g_n)) continue;
      if (report && ++wrong <= 3)
        failure("{}: index {} expected {} actual {}", describe(label, c), j, show(want), show(recv[j]));
      else if (!report) ++wrong;
    }
    if (report && wrong > 3) failure("{}: {} wrong elements in all", describe(label, c), wrong);
    if (!sendbuf.guards_intact() || !recvbuf.guards_intact()) {
      ++wrong;
      if (report) failure("{}: wrote outside its buffers (guard bytes changed)", describe(label, c));
    }
    // Input the collective must not touch: all of it out of place; in place, the blocks of
    // reduce-scatter's and scatter's input other than this rank's (the NCCL layout keeps them).
    const bool keeps_input = !c.in_place || cb.out_in_send;
    if (keeps_input && corrupt_index < 0) {
      for (size_t i = 0; i < send_elems; ++i) {
        if (c.in_place && i / c.count == static_cast<size_t>(g_rank)) continue;
        const T want = collective_input<T>(c.coll, c.op, c.seed, g_rank, i, g_n);
        if (std::memcmp(&want, &send[i], esz) != 0) {
          ++wrong;
          if (report) failure("{}: changed its input at index {}", describe(label, c), i);
          break;
        }
      }
    }
    return wrong;
  });
}

struct NamedImpl {
  std::string name;
  std::unique_ptr<Implementation> (*make)();
};
const NamedImpl kImpls[] = {
    {"ring", make_ring_cpu}, {"tree", make_tree_cpu}, {"direct", make_direct_cpu}, {"mpi", make_mpi_baseline}};

struct Setting {
  std::string name;
  const char* slot_bytes;  // nullptr: default
  const char* depth;
  std::string transport;
  bool fake_nodes;  // ranks alternate between two pretend hosts: pairs mix shm and mpi
  bool big;         // include the multi-MiB sizes
};

void set_env(const char* name, const char* value) {
  if (value) setenv(name, value, 1);
  else unsetenv(name);
}

std::unique_ptr<Implementation> make_setup(const NamedImpl& ni, ImplContext& ctx, const Setting& s) {
  set_env("CCBENCH_CPU_SLOT_BYTES", s.slot_bytes);
  set_env("CCBENCH_CPU_SLOT_DEPTH", s.depth);
  auto impl = ni.make();
  impl->setup(ctx);
  return impl;
}

// A case may be skipped only for a reason its implementation documents: a collective it does not
// declare (the reason says so), or the MPI library's saturating 8-bit sums (mpi only).
void check_skip(const std::string& label, const Implementation& impl, const std::string& name, const CaseSpec& s,
                const std::string& why) {
  const bool declared = impl.collectives().contains(s.coll);
  const bool saturating = name == "mpi" && has_reduce_op(s.coll) && s.op == ReduceOp::sum &&
                          (s.dtype == DataType::int8 || s.dtype == DataType::uint8) &&
                          why.find("saturates") != std::string::npos;
  if (declared ? !saturating : why.rfind(name + " implements ", 0) != 0)
    failure("{}: {} {} {} skipped for a reason not allowed here: {}", label, ccbench::name(s.coll),
            ccbench::name(s.dtype), ccbench::name(s.op), why);
}

void correctness(const RankLayout& real) {
  const RankLayout fake = layout_from_hosts([](int r) { return fmt::format("pretend-host-{}", r % 2); });
  const Setting settings[] = {
      {"default slots", nullptr, nullptr, "auto", false, true},
      {"1K slots x2", "1K", "2", "auto", false, false},
      {"4K slots x3, two pretend nodes", "4K", "3", "auto", true, false},
      {"1K slots x2, --transport mpi", "1K", "2", "mpi", false, false},
      // Sockets over loopback: small slots give many partial reads and writes, the default ones
      // multi-MiB transfers.
      {"1K slots x2, --transport tcp", "1K", "2", "tcp", false, false},
      {"default slots, --transport tcp", nullptr, nullptr, "tcp", false, true},
  };
  std::uint64_t seed = 1;
  for (const Setting& s : settings) {
    for (const NamedImpl& ni : kImpls) {
      if (ni.name == "mpi" && (s.slot_bytes || s.transport != "auto")) continue;  // no slots, no transports
      ImplContext ctx;
      ctx.comm = MPI_COMM_WORLD;
      ctx.layout = s.fake_nodes ? &fake : &real;
      ctx.transport = s.transport;
      ctx.timeout = std::chrono::seconds(60);
      auto impl = make_setup(ni, ctx, s);
      const std::string label = fmt::format("{} [{}, {}]", ni.name, s.name, impl->transport());
      if (g_rank == 0) std::printf("# %s\n", label.c_str());
      if (s.fake_nodes && g_n > 1 && impl->transport() == "shm")
        failure("{}: ranks on two pretend hosts should use mpi between them", label);
      if (ni.name != "mpi" && g_n > 1 && (s.transport == "tcp") != (impl->transport().find("tcp") != std::string::npos))
        failure("{}: tcp must be used when forced and only then", label);
      const auto t0 = std::chrono::steady_clock::now();
      for (Collective coll : kAllCollectives) {
        for (DataType t : kAllDataTypes) {
          std::vector<ReduceOp> ops = {ReduceOp::none};
          if (has_reduce_op(coll)) ops.assign(std::begin(kAllReduceOps), std::end(kAllReduceOps));
          for (ReduceOp op : ops) {
            std::vector<size_t> counts = {1, 7, static_cast<size_t>(g_n) * 300 + 1};
            const bool big_type = t == DataType::float32 || t == DataType::int8;
            // Several MiB per buffer: the n-block collectives split it into pieces.
            const size_t big = collective_descriptor(coll).size_is_total ? 1000003 / static_cast<size_t>(g_n) : 1000003;
            if (s.big && big_type && (op == ReduceOp::sum || op == ReduceOp::none)) counts.push_back(big);
            for (size_t count : counts) {
              for (bool in_place : {false, true}) {
                if (in_place && !supports_in_place(coll)) continue;
                const Case c{coll, t, op, count, in_place, static_cast<int>(seed % static_cast<std::uint64_t>(g_n)),
                             seed};
                ++seed;
                CaseSpec spec{coll, t, has_reduce_op(coll) ? op : ReduceOp::none, c.root};
                if (auto why = case_unsupported(*impl, ni.name, spec, ctx)) {
                  check_skip(label, *impl, ni.name, spec, *why);
                  ++g_skipped;
                  continue;
                }
                run_case(*impl, label, c);
              }
            }
          }
        }
      }
      MPI_Barrier(MPI_COMM_WORLD);
      if (g_rank == 0)
        std::printf("#   %.2f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  set_env("CCBENCH_CPU_SLOT_BYTES", nullptr);
  set_env("CCBENCH_CPU_SLOT_DEPTH", nullptr);
}

// A corrupted input on rank n-1 must show up in the check of every rank that receives it: each
// rank for all-reduce and all-gather, one rank for the others (the root where there is one).
void corruption(const RankLayout& real) {
  struct Corrupted {
    Case c;
    long index;
    long total_wrong;  // over all ranks
  };
  const int last = g_n - 1;
  const Corrupted cases[] = {
      {{Collective::allreduce, DataType::int32, ReduceOp::sum, 1000, false, 0, 77}, 17, g_n},
      {{Collective::allgather, DataType::float16, ReduceOp::none, 1000, true, 0, 78}, 5, g_n},
      {{Collective::reduce, DataType::int32, ReduceOp::sum, 1000, false, 0, 79}, 3, 1},
      {{Collective::alltoall, DataType::int8, ReduceOp::none, 999, false, 0, 80}, 999 * last / 2 + 1, 1},
      {{Collective::alltoallv, DataType::float64, ReduceOp::none, 333, false, 0, 81}, 100, 1},
      {{Collective::gather, DataType::uint64, ReduceOp::none, 1000, true, last / 2, 82}, 9, 1},
      {{Collective::scatter, DataType::float32, ReduceOp::none, 1000, false, last, 83}, 1000 * last / 2 + 4, 1},
  };
  for (const NamedImpl& ni : kImpls) {
    ImplContext ctx;
    ctx.comm = MPI_COMM_WORLD;
    ctx.layout = &real;
    auto impl = ni.make();
    impl->setup(ctx);
    int tried = 0;
    for (const Corrupted& k : cases) {
      const CaseSpec spec{k.c.coll, k.c.dtype, k.c.op, k.c.root};
      if (case_unsupported(*impl, ni.name, spec, ctx)) continue;
      ++tried;
      long wrong = run_case(*impl, ni.name, k.c, k.index, false), total = 0;
      MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      if (total != k.total_wrong)
        failure("{}: a corrupted input gave {} wrong elements over all ranks, expected {}", describe(ni.name, k.c),
                total, k.total_wrong);
    }
    if (tried == 0) failure("{}: no corruption case applies", ni.name);
  }
}

// The timeout of the cases that wait for it to pass. It also bounds the channel set-up before
// them: 0.3 s was too short for 4 ranks under AddressSanitizer on 2 busy cores.
constexpr std::chrono::milliseconds kShortTimeout{1000};

// Channel set-up and run-time errors: forced shm across (pretend) hosts, bad settings, a rank that
// never arrives (timeout), the abort flag.
void errors(const RankLayout& real) {
  auto expect_error = [](ExitCode code, const std::string& what, const std::function<void()>& f,
                         const std::string& must_contain = "") {
    try {
      f();
      failure("{}: no error", what);
    } catch (const Error& e) {
      if (e.code() != code || (!must_contain.empty() && std::string(e.what()).find(must_contain) == std::string::npos))
        failure("{}: got '{}' (code {}), expected code {} mentioning '{}'", what, e.what(), static_cast<int>(e.code()),
                static_cast<int>(code), must_contain);
    }
  };

  ImplContext ctx;
  ctx.comm = MPI_COMM_WORLD;
  ctx.layout = &real;
  expect_error(ExitCode::usage, "CCBENCH_CPU_SLOT_BYTES=100", [&] {
    setenv("CCBENCH_CPU_SLOT_BYTES", "100", 1);
    make_ring_cpu()->setup(ctx);
  }, "multiple of 64");
  set_env("CCBENCH_CPU_SLOT_BYTES", nullptr);
  expect_error(ExitCode::usage, "CCBENCH_CPU_SLOT_DEPTH=1", [&] {
    setenv("CCBENCH_CPU_SLOT_DEPTH", "1", 1);
    make_tree_cpu()->setup(ctx);
  }, "from 2 to");
  set_env("CCBENCH_CPU_SLOT_DEPTH", nullptr);

  // Unsupported cases say why.
  {
    CaseSpec bc{Collective::broadcast, DataType::float32, ReduceOp::none, 0};
    auto why = make_tree_cpu()->unsupported(bc, ctx);
    if (!why || *why != "tree implements allreduce, allgather; not broadcast")
      failure("tree broadcast: the reason should list what tree implements, got '{}'", why.value_or("none"));
    ImplContext gpu = ctx;
    gpu.device = Device::gpu;
    for (const NamedImpl& ni : kImpls)
      if (!ni.make()->unsupported(CaseSpec{}, gpu)) failure("{} accepts GPU ranks", ni.name);
  }

  if (g_n < 2) return;
  const RankLayout fake = layout_from_hosts([](int r) { return fmt::format("pretend-host-{}", r % 2); });
  expect_error(ExitCode::precondition, "forced shm across hosts", [&] {
    std::vector<ChannelRequest> req = {{(g_rank + 1) % g_n, 0, true}, {(g_rank + g_n - 1) % g_n, 0, false}};
    ChannelOptions o;
    o.transport = "shm";
    connect_channels(MPI_COMM_WORLD, fake, req, o);
  }, "valid here: mpi");
  expect_error(ExitCode::usage, "unknown transport", [&] {
    ChannelOptions o;
    o.transport = "carrier-pigeon";
    connect_channels(MPI_COMM_WORLD, real, {}, o);
  }, "valid: auto, shm, mpi");
  // A send request whose receiver never asks for it.
  expect_error(ExitCode::timeout, "unmatched send request", [&] {
    std::vector<ChannelRequest> req;
    if (g_rank == 0) req.push_back({1, 999, true});
    ChannelOptions o;
    o.timeout = kShortTimeout;
    connect_channels(MPI_COMM_WORLD, real, req, o);
  }, g_rank == 0 ? "tag 999" : "every rank");
  MPI_Barrier(MPI_COMM_WORLD);

  // Rank 0 never joins: everyone else must give up after the timeout, naming what it waited for.
  for (bool use_abort : {false, true}) {
    ImplContext c2 = ctx;
    c2.timeout = use_abort ? std::chrono::milliseconds(60000) : kShortTimeout;
    auto ring = make_ring_cpu();
    ring->setup(c2);
    if (g_rank != 0) {
      std::thread aborter;
      if (use_abort)
        aborter = std::thread([] {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          cpu_abort_requested = true;
        });
      const auto t0 = std::chrono::steady_clock::now();
      const Case c{Collective::allreduce, DataType::float32, ReduceOp::sum, 100000, false, 0, 5};
      expect_error(ExitCode::timeout, use_abort ? "abort flag" : "rank 0 absent",
                   [&] { run_case(*ring, "ring", c, -1, false); }, use_abort ? "aborted" : "waited");
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (s > 10) failure("giving up took {:.1f} s", s);
      if (aborter.joinable()) aborter.join();
      cpu_abort_requested = false;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// ---- timing ----

double time_impl(Implementation& impl, Collective coll, size_t bytes, int iters) {
  const size_t esz = 4;
  const size_t n = static_cast<size_t>(g_n);
  size_t count = coll == Collective::allgather ? bytes / esz / n : bytes / esz;
  Buffer send(count * esz), recv((coll == Collective::allgather ? count * n : count) * esz);
  std::memset(send.data(), 0, count * esz);
  std::memset(recv.data(), 0, (coll == Collective::allgather ? count * n : count) * esz);
  CallArgs a;
  a.spec = {coll, DataType::float32, coll == Collective::allreduce ? ReduceOp::sum : ReduceOp::none, 0};
  a.send = send.data();
  a.recv = recv.data();
  a.count = count;
  for (int i = 0; i < 3; ++i) impl.run(a);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) impl.run(a);
  double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
  double tmax = 0;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

void perf(const RankLayout& real) {
  ImplContext ctx;
  ctx.comm = MPI_COMM_WORLD;
  ctx.layout = &real;
  std::vector<std::pair<std::string, std::unique_ptr<Implementation>>> impls;
  for (const NamedImpl& ni : kImpls) {
    impls.emplace_back(ni.name, ni.make());
    impls.back().second->setup(ctx);
  }
  const char* sb = std::getenv("CCBENCH_CPU_SLOT_BYTES");
  const char* sd = std::getenv("CCBENCH_CPU_SLOT_DEPTH");
  if (g_rank == 0)
    std::printf("# %d ranks, slots %s x %s; time per call (us) and busbw (GB/s), float sum\n", g_n, sb ? sb : "256K",
                sd ? sd : "4");
  for (Collective coll : {Collective::allreduce, Collective::allgather}) {
    if (g_rank == 0) {
      std::printf("%-10s %10s", name(coll).data(), "bytes");
      for (auto& [nm, impl] : impls) std::printf(" %10s %7s", (nm + "_us").c_str(), "GB/s");
      std::printf("\n");
    }
    for (size_t bytes = 64 * 1024; bytes <= 64ull << 20; bytes *= 4) {
      const int iters = static_cast<int>(std::clamp<size_t>((256ull << 20) / bytes, 5, 200));
      if (g_rank == 0) std::printf("%-10s %10zu", "", bytes);
      for (auto& [nm, impl] : impls) {
        const double t = time_impl(*impl, coll, bytes, iters);
        if (g_rank == 0) std::printf(" %10.1f %7.2f", t * 1e6, bytes / t / 1e9 * bus_factor(coll, g_n));
      }
      if (g_rank == 0) std::printf("\n");
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace ccbench

int main(int argc, char** argv) {
  using namespace ccbench;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_n);
  const bool perf_mode = argc > 1 && std::string(argv[1]) == "--perf";
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const RankLayout layout = real_layout();
    if (perf_mode) {
      perf(layout);
    } else {
      correctness(layout);
      corruption(layout);
      errors(layout);
    }
  } catch (const Error& e) {
    failure("stopped by an error: {}", e.what());
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(e.code()));  // others may be waiting for this rank
  }
  long failures = 0, checked = 0;
  MPI_Allreduce(&g_failures, &failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&g_checked, &checked, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0 && !perf_mode)
    std::printf("%s: %d ranks, %ld checked runs (all ranks), %ld skipped per rank, %ld failures, %.1f s\n",
                failures ? "FAILED" : "OK", g_n, checked, g_skipped, failures,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  MPI_Finalize();
  return failures ? 1 : 0;
}
