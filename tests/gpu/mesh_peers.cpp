// Which peers' FIFO memory each rank maps: our ring's two neighbours and the double tree's parents
// and children, never every rank of the node (past 8 GPUs on PCIe, CUDA's peer limit fails the
// mapping; over host, every mapped peer's region is pinned in this process). Run under mpirun with
// many ranks (16: a PCIe node of 16 GPUs) on one GPU over the host transport: each rank sets up
// the ring, then the tree, runs one all-reduce with each (every element checked) and reads
// /proc/self/maps for the peers' /dev/shm regions it holds: their owners name them
// ccbench-gpu-<pid>-<rank>-<serial> (transports/gpu/gpu_host.cpp). That set, seen by the kernel rather
// than by our bookkeeping, must be the schedule's peers exactly. Exit 0 when it is on every rank
// and every element is exact, 1 naming the ranks and sets that differ, 77 without a GPU.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "collectives/implementation.h"
#include "collectives/schedules/tree.h"
#include "core/checks_cuda.h"
#include "core/error.h"
#include "tests/gpu/direct_rank.h"

namespace {

using namespace ccbench;

constexpr std::size_t kCount = 64 << 10;  // floats per rank: several slots per channel

// The ranks other than `self` whose host-transport regions this process has mapped.
std::set<int> mapped_peers(int self) {
  std::ifstream maps("/proc/self/maps");
  std::set<int> peers;
  const std::string tag = "/ccbench-gpu-";
  for (std::string line; std::getline(maps, line);) {
    const std::size_t at = line.find(tag);
    if (at == std::string::npos) continue;
    const std::size_t pid_end = line.find('-', at + tag.size());
    if (pid_end == std::string::npos) continue;
    const int owner = std::stoi(line.substr(pid_end + 1));
    if (owner != self) peers.insert(owner);
  }
  return peers;
}

std::set<int> ring_peers(const ImplContext& ctx, int rank, int n) {
  const std::vector<int> order = ring_order(ctx.ring_order, *ctx.layout);
  const auto at = static_cast<int>(std::find(order.begin(), order.end(), rank) - order.begin());
  return {order[static_cast<std::size_t>((at + 1) % n)], order[static_cast<std::size_t>((at + n - 1) % n)]};
}

std::string text(const std::set<int>& s) { return fmt::format("{{{}}}", fmt::join(s, ",")); }

// One all-reduce of `id` over host; returns this rank's failures (wrong elements, or a
// mapped set other than `want`), printing them.
int check_impl(ImplId id, ImplContext& ctx, int rank, int n, const std::set<int>& want) {
  const std::string name_text(name(id));
  const char* impl_name = name_text.c_str();
  const ImplInfo* info = find_implementation(id, Device::gpu);
  if (!info || !info->make) throw Error(ExitCode::precondition, fmt::format("{} is not built in", impl_name));
  auto impl = info->make();
  impl->setup(ctx);
  float *send, *recv;
  CCB_CUDA(cudaMalloc(&send, kCount * sizeof(float)));
  CCB_CUDA(cudaMalloc(&recv, kCount * sizeof(float)));
  std::vector<float> host(kCount);
  for (std::size_t i = 0; i < kCount; ++i) host[i] = static_cast<float>((i + static_cast<std::size_t>(rank)) % 13);
  CCB_CUDA(cudaMemcpy(send, host.data(), kCount * sizeof(float), cudaMemcpyHostToDevice));
  impl->attach(BufferSet{send, kCount * sizeof(float), recv, kCount * sizeof(float), Collective::allreduce});
  impl->run(CallArgs{CaseSpec{Collective::allreduce, DataType::float32, ReduceOp::sum, 0}, send, recv, kCount});
  CCB_CUDA(cudaStreamSynchronize(static_cast<cudaStream_t>(ctx.stream)));
  impl->check_async_errors();
  CCB_CUDA(cudaMemcpy(host.data(), recv, kCount * sizeof(float), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (std::size_t i = 0; i < kCount; ++i) {
    float sum = 0;
    for (int r = 0; r < n; ++r) sum += static_cast<float>((i + static_cast<std::size_t>(r)) % 13);
    if (host[i] != sum && wrong++ == 0)
      std::printf("rank %d %s: element %zu expected %g got %g\n", rank, impl_name, i, sum, host[i]);
  }
  const std::set<int> got = mapped_peers(rank);
  if (got != want)
    std::printf("rank %d %s: mapped the regions of ranks %s; the schedule's peers are %s\n", rank, impl_name,
                text(got).c_str(), text(want).c_str());
  impl->detach();
  impl.reset();
  cudaFree(send);
  cudaFree(recv);
  return wrong + (got != want);
}

int run(int rank, int n) {
  direct::DirectRank me(rank, n, "host", std::chrono::seconds(60));
  ImplContext& ctx = me.ctx;
  int failures = check_impl(ImplId::ring, ctx, rank, n, ring_peers(ctx, rank, n));
  failures += check_impl(ImplId::tree, ctx, rank, n, direct::tree_peers(rank, n));
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("mesh peers: %d ranks over host, ring and tree: %s\n", n,
                total ? "FAILED" : "every rank mapped exactly its schedule's peers, every element exact");
  return total ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) { return ccbench::direct::mpi_main(argc, argv, run); }
