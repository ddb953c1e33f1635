// One-shot all-reduce driven directly (not through the harness's ascending size sweep) with sizes
// that shrink and grow again, eagerly and inside one CUDA graph over mixed sizes: which words a
// block covers changes with the size, and a word must never be taken from a line an earlier call
// left behind. Every call gets fresh inputs, so a stale word is a wrong element.
// Calls of zero elements come in between (the harness never makes one, a direct user may): they
// must launch nothing. The LL parity flips with every launch, and a rank stays at most one call
// ahead of its peer only because each launch waits for the peer's words; a zero-word launch waits
// for none, so the next call could write the parity the peer still reads and clears. Captured into
// a graph alone, a zero-element call must add no node.
// Run under mpirun with 2 or more ranks on GPUs (label gpu1: ranks sharing one GPU). Exit 0 when
// every element of every call is exact and zero-element calls launch nothing, 1 naming the first
// wrong elements or the launches, 77 without a GPU.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "collectives/implementation.h"
#include "core/checks_cuda.h"
#include "core/error.h"
#include "tests/gpu/direct_rank.h"

namespace {

using namespace ccbench;

// Sizes in bytes per rank: 12 KiB takes 2 blocks, 8 KiB one, 4 KiB one, 64 KiB eight; 0 none.
const std::vector<std::size_t> kSequence = {12 << 10, 0,        8 << 10, 12 << 10, 0,       0,
                                           4 << 10,  64 << 10, 0,       8 << 10,  12 << 10};
constexpr int kRepeats = 3;  // the whole sequence, eagerly; then the graph, replayed this often

// Small integers: sums are exact in float whatever the order.
float input(int call, int rank, std::size_t i) { return static_cast<float>((call * 7 + rank * 3 + i) % 61); }

struct Buffers {
  float* send = nullptr;
  float* recv = nullptr;
  std::size_t count = 0;
};

class Check {
 public:
  Check(int rank, int nranks) : rank_(rank), nranks_(nranks) {}
  // Fills the send buffer for call `call` (before the call is enqueued, on the stream).
  void fill(const Buffers& b, int call, std::size_t count, cudaStream_t s) {
    if (count == 0) return;
    std::vector<float> host(count);
    for (std::size_t i = 0; i < count; ++i) host[i] = input(call, rank_, i);
    CCB_CUDA(cudaMemcpyAsync(b.send, host.data(), count * sizeof(float), cudaMemcpyHostToDevice, s));
    CCB_CUDA(cudaStreamSynchronize(s));
  }
  // Compares the receive buffer with the sum for call `call`; returns the wrong elements.
  int verify(const Buffers& b, int call, std::size_t count, const char* how) {
    std::vector<float> got(count);
    CCB_CUDA(cudaMemcpy(got.data(), b.recv, count * sizeof(float), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (std::size_t i = 0; i < count; ++i) {
      float want = 0;
      for (int r = 0; r < nranks_; ++r) want += input(call, r, i);
      if (got[i] != want && wrong++ < 3)
        std::printf("rank %d %s call %d (%zu B): element %zu expected %g got %g\n", rank_, how, call,
                    count * sizeof(float), i, want, got[i]);
    }
    return wrong;
  }

 private:
  int rank_, nranks_;
};

std::size_t nodes_of(cudaGraph_t graph) {
  std::size_t nodes = 0;
  CCB_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
  return nodes;
}

// A zero-element call captured alone: the nodes it enqueued (must be none), counted as failures.
int zero_launches(Implementation& impl, const CallArgs& zero, cudaStream_t stream, int rank) {
  cudaGraph_t graph;
  CCB_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  impl.run(zero);
  CCB_CUDA(cudaStreamEndCapture(stream, &graph));
  const std::size_t nodes = nodes_of(graph);
  cudaGraphDestroy(graph);
  if (nodes)
    std::printf("rank %d: a zero-element call enqueued %zu graph node(s); it must enqueue none\n", rank, nodes);
  return static_cast<int>(nodes);
}

// The sequence's graph holds one kernel per call with elements, none for the zero-element calls.
int graph_launches(cudaGraph_t graph, int rank) {
  std::size_t calls = 0;
  for (std::size_t bytes : kSequence) calls += bytes ? 1 : 0;
  const std::size_t nodes = nodes_of(graph);
  if (nodes == calls) return 0;
  std::printf("rank %d: the sequence's graph has %zu nodes for its %zu calls with elements\n", rank, nodes, calls);
  return 1;
}

int run(int rank, int nranks) {
  const ImplInfo* info = find_implementation(ImplId::oneshot, Device::gpu);
  if (!info || !info->make) throw Error(ExitCode::precondition, "oneshot is not built in");
  std::size_t largest = 0;
  for (std::size_t b : kSequence) largest = std::max(largest, b);
  direct::DirectRank me(rank, nranks, "p2p", std::chrono::seconds(20));
  ImplContext& ctx = me.ctx;
  cudaStream_t stream = me.stream;
  auto impl = info->make();
  impl->setup(ctx);
  Buffers b;
  b.count = largest / sizeof(float);
  CCB_CUDA(cudaMalloc(&b.send, largest));
  CCB_CUDA(cudaMalloc(&b.recv, largest));
  impl->attach(BufferSet{b.send, largest, b.recv, largest, Collective::allreduce});
  Check check(rank, nranks);
  auto args = [&](std::size_t bytes) {
    return CallArgs{CaseSpec{Collective::allreduce, DataType::float32, ReduceOp::sum, 0}, b.send, b.recv, bytes / 4};
  };
  int wrong = zero_launches(*impl, args(0), stream, rank), call = 0;
  for (int rep = 0; rep < kRepeats; ++rep)
    for (std::size_t bytes : kSequence) {
      check.fill(b, call, bytes / 4, stream);
      MPI_Barrier(MPI_COMM_WORLD);
      impl->run(args(bytes));
      CCB_CUDA(cudaStreamSynchronize(stream));
      impl->check_async_errors();
      wrong += check.verify(b, call, bytes / 4, "eager");
      ++call;
    }
  // One graph over the sequence: every call of a replay writes the same output, so only the last
  // size's result is checked, with the same input for every call of the replay.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CCB_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (std::size_t bytes : kSequence) impl->run(args(bytes));
  CCB_CUDA(cudaStreamEndCapture(stream, &graph));
  wrong += graph_launches(graph, rank);
  CCB_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int rep = 0; rep < kRepeats; ++rep, ++call) {
    check.fill(b, call, b.count, stream);
    MPI_Barrier(MPI_COMM_WORLD);
    CCB_CUDA(cudaGraphLaunch(exec, stream));
    CCB_CUDA(cudaStreamSynchronize(stream));
    impl->check_async_errors();
    wrong += check.verify(b, call, kSequence.back() / 4, "graph");
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  impl->detach();
  impl.reset();
  cudaFree(b.send);
  cudaFree(b.recv);
  int total = 0;
  MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("oneshot sequence: %d calls of sizes 0 and 4K-64K shrinking and growing, eager and in a graph, on "
                "%d ranks: %d wrong elements or zero-element launches\n", call, nranks, total);
  return total ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) { return ccbench::direct::mpi_main(argc, argv, run); }
