// Buffers freed and re-created between cases, as the harness does between measurement series,
// `cycles` times (1000 by default) over our kernels that map peers' memory with CUDA IPC (tree's
// Bruck all-gather, oneshot, twoshot, ce; ring's FIFOs): each cycle allocates buffers of a new size, attaches
// them, runs one collective (every element checked), detaches and frees them at once. CUDA leaves
// freeing memory a peer still maps undefined, so detach() must close this rank's mappings and
// then wait until every rank has closed its own (transports/gpu/cuda_ipc.h): one rank per cycle
// enters detach() kSkew late, and
//   - after detach() this rank maps no peer's buffer any more (ipc_imports());
//   - no rank returned from detach() before the last rank's last close (the imports' close
//     times against the return times, on the host's monotonic clock, over every rank);
//   - the same when each implementation goes (scratch and FIFO memory: close, barrier, free; one
//     rank late again), after which nothing is mapped.
// Run it under compute-sanitizer where the machine has it (tests/gpu/run_teardown_test.sh).
// Run under mpirun with 2 or more ranks on one GPU (label gpu1). Exit 0 when every check holds on
// every rank, 1 naming the first failures, 77 without a GPU.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collectives/implementation.h"
#include "core/checks_cuda.h"
#include "core/error.h"
#include "tests/gpu/direct_rank.h"
#include "transports/gpu/cuda_ipc.h"

namespace {

using namespace ccbench;
using Clock = std::chrono::steady_clock;

constexpr int kDefaultCycles = 1000;
// How late one rank enters detach() each cycle: far above the few microseconds a detach takes, so
// a rank that does not wait for the others returns before the late rank has closed anything.
constexpr std::chrono::milliseconds kSkew{2};
constexpr int kMaxReported = 5;  // failures printed per rank

struct Case {
  ImplId id;
  Collective coll;
};
// ring maps only FIFO memory (no buffer): its teardown is the FIFO mesh's alone.
const Case kCases[] = {{ImplId::tree, Collective::allgather},
                       {ImplId::oneshot, Collective::allreduce},
                       {ImplId::twoshot, Collective::allreduce},
                       {ImplId::ce, Collective::allgather},
                       {ImplId::ring, Collective::allreduce}};

float input(int cycle, int rank, std::size_t i) {
  return static_cast<float>((static_cast<std::size_t>(cycle) * 5 + static_cast<std::size_t>(rank) * 3 + i) % 31);
}

std::int64_t ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

class Checks {
 public:
  explicit Checks(int rank) : rank_(rank) {}
  template <typename... Args>
  void fail(fmt::format_string<Args...> f, Args&&... args) {
    if (failures_++ < kMaxReported)
      std::printf("rank %d: %s\n", rank_, fmt::format(f, std::forward<Args>(args)...).c_str());
  }
  void count() { ++checks_; }
  int failures() const { return failures_; }
  long checks() const { return checks_; }

 private:
  int rank_;
  int failures_ = 0;
  long checks_ = 0;
};

// Collective: every rank's last close no later than any rank's return from `what`. Returns the
// margin (the earliest return less the latest close) in microseconds.
double closed_before_return(Clock::time_point returned, const char* what, int cycle, Checks& c) {
  std::int64_t mine[2] = {ns(ipc_imports().last_close), -ns(returned)}, worst[2];
  MPI_Allreduce(mine, worst, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  const std::int64_t latest_close = worst[0], earliest_return = -worst[1];
  c.count();
  if (latest_close > earliest_return)
    c.fail("cycle {}: a rank returned from {} {:.1f} us before another rank closed its last CUDA IPC mapping", cycle,
           what, (latest_close - earliest_return) / 1e3);
  return (earliest_return - latest_close) / 1e3;
}

int open_buffers() {
  int n = 0;
  for (const IpcImport& i : ipc_imports().open) n += i.kind == IpcKind::buffer;
  return n;
}

// One cycle: fresh buffers of a new size, one collective checked, detach (one rank late), free.
double cycle_once(Implementation& impl, const Case& k, int cycle, const ImplContext& ctx, int rank, int n, Checks& c) {
  const std::size_t count = 64 + static_cast<std::size_t>(cycle * 37 % 2000);
  const std::size_t out = k.coll == Collective::allgather ? count * static_cast<std::size_t>(n) : count;
  float *send, *recv;
  CCB_CUDA(cudaMalloc(&send, count * sizeof(float)));
  CCB_CUDA(cudaMalloc(&recv, out * sizeof(float)));
  std::vector<float> host(count);
  for (std::size_t i = 0; i < count; ++i) host[i] = input(cycle, rank, i);
  CCB_CUDA(cudaMemcpy(send, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  impl.attach(BufferSet{send, count * sizeof(float), recv, out * sizeof(float), k.coll});
  MPI_Barrier(MPI_COMM_WORLD);
  const ReduceOp op = k.coll == Collective::allreduce ? ReduceOp::sum : ReduceOp::none;
  impl.run(CallArgs{CaseSpec{k.coll, DataType::float32, op, 0}, send, recv, count});
  CCB_CUDA(cudaStreamSynchronize(static_cast<cudaStream_t>(ctx.stream)));
  impl.check_async_errors();
  std::vector<float> got(out);
  CCB_CUDA(cudaMemcpy(got.data(), recv, out * sizeof(float), cudaMemcpyDeviceToHost));
  c.count();
  for (std::size_t i = 0; i < out; ++i) {
    float want = 0;
    if (k.coll == Collective::allgather) want = input(cycle, static_cast<int>(i / count), i % count);
    else
      for (int r = 0; r < n; ++r) want += input(cycle, r, i);
    if (got[i] != want) {
      c.fail("cycle {} {} {}: element {} expected {} got {}", cycle, name(k.id), name(k.coll), i, want, got[i]);
      break;
    }
  }
  if (cycle % n == rank) std::this_thread::sleep_for(kSkew);
  impl.detach();
  const Clock::time_point returned = Clock::now();
  c.count();
  if (const int left = open_buffers())
    c.fail("cycle {} {}: {} peer buffers still mapped after detach()", cycle, name(k.id), left);
  CCB_CUDA(cudaFree(send));
  CCB_CUDA(cudaFree(recv));
  return closed_before_return(returned, "detach()", cycle, c);
}

int run(int rank, int n, int cycles) {
  direct::DirectRank me(rank, n, "p2p", std::chrono::seconds(60));
  Checks c(rank);
  std::vector<std::unique_ptr<Implementation>> impls;
  for (const Case& k : kCases) {
    const ImplInfo* info = find_implementation(k.id, Device::gpu);
    if (!info || !info->make) throw Error(ExitCode::precondition, fmt::format("{} is not built in", name(k.id)));
    impls.push_back(info->make());
    impls.back()->setup(me.ctx);
  }
  const auto t0 = Clock::now();
  double least_margin_us = 1e18;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    const std::size_t which = static_cast<std::size_t>(cycle) % impls.size();
    least_margin_us = std::min(least_margin_us, cycle_once(*impls[which], kCases[which], cycle, me.ctx, rank, n, c));
  }
  for (std::size_t i = 0; i < impls.size(); ++i) {  // scratch regions and FIFO memory: close, barrier, free
    if (static_cast<int>(i) % n == rank) std::this_thread::sleep_for(kSkew);
    impls[i].reset();
    const std::string what = fmt::format("the teardown of {}", name(kCases[i].id));
    least_margin_us = std::min(least_margin_us, closed_before_return(Clock::now(), what.c_str(), cycles, c));
  }
  c.count();
  if (const std::size_t left = ipc_imports().open.size()) c.fail("{} CUDA IPC mappings left after teardown", left);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  int failures = c.failures(), total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("teardown: %d cycles of buffers freed and re-created (tree all-gather, oneshot, twoshot, ce, ring) "
                "on %d ranks, %ld checks per rank, %.1f s: %s\n",
                cycles, n, c.checks(), seconds,
                total ? "FAILED"
                      : fmt::format("ok: every element exact, every rank's mappings closed before any rank "
                                    "returned from detach() or a teardown (at least {:.1f} us before), nothing mapped "
                                    "after teardown",
                                    least_margin_us)
                            .c_str());
  return total ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int cycles = argc > 1 ? std::atoi(argv[1]) : kDefaultCycles;
  if (cycles < 1) {
    std::printf("usage: %s [CYCLES >= 1]\n", argv[0]);
    return 2;
  }
  return ccbench::direct::mpi_main(argc, argv, [cycles](int rank, int n) { return run(rank, n, cycles); });
}
