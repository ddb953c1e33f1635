#pragma once
// The frame of the GPU tests that drive an implementation directly under mpirun, without the
// harness (oneshot_sequence.cpp, mesh_peers.cpp, tree_peers.cpp, teardown.cpp): a rank's context on
// its GPU, the tree's peers, and a main that runs one function on every rank and exits with the
// worst code over them (77 without a GPU).
#include <cuda_runtime.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "collectives/implementation.h"
#include "collectives/schedules/tree.h"
#include "core/checks_cuda.h"
#include "core/error.h"

namespace ccbench::direct {

// Rank `rank` of `n`, all on one emulated host, on GPU `rank % visible GPUs` with a stream of its
// own, asking for `transport`. Not copied: ctx points at layout.
class DirectRank {
 public:
  DirectRank(int rank, int n, const std::string& transport, std::chrono::milliseconds timeout)
      : layout(RankLayout::from_hosts(rank, std::vector<std::string>(static_cast<std::size_t>(n), "h"))) {
    int devices = 0;
    CCB_CUDA(cudaGetDeviceCount(&devices));
    ctx.comm = MPI_COMM_WORLD;
    ctx.layout = &layout;
    ctx.device = Device::gpu;
    ctx.transport = transport;
    ctx.cuda_device = rank % devices;
    ctx.timeout = timeout;
    CCB_CUDA(cudaSetDevice(ctx.cuda_device));
    CCB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    ctx.stream = stream;
  }
  DirectRank(const DirectRank&) = delete;
  DirectRank& operator=(const DirectRank&) = delete;
  ~DirectRank() { cudaStreamDestroy(stream); }

  RankLayout layout;
  ImplContext ctx;
  cudaStream_t stream = nullptr;
};

// The ranks the double binary tree connects `rank` with: both trees' parents and children.
inline std::set<int> tree_peers(int rank, int n) {
  std::set<int> peers;
  for (int t = 0; t < 2; ++t) {
    const schedule::TreeLinks l = schedule::double_tree(n, rank, t);
    for (int p : {l.parent, l.child[0], l.child[1]})
      if (p >= 0) peers.insert(p);
  }
  return peers;
}

// MPI_Init, run(rank, nranks) on every rank (an Error printed and turned into its exit code),
// then the worst exit code over the ranks; 77 where no GPU is visible.
template <typename Run>
int mpi_main(int argc, char** argv, Run run) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no GPU\n");
    return 77;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1, rc = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  try {
    rc = run(rank, nranks);
  } catch (const Error& e) {
    std::printf("rank %d: error: %s\n", rank, e.what());
    rc = static_cast<int>(e.code());
  }
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}

}  // namespace ccbench::direct
