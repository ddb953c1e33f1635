// Stand-alone check of NCCL's symmetric-window all-gather, without any ccbench code: buffers from
// ncclMemAlloc registered with ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC), `calls`
// back-to-back ncclAllGather calls, then every output element compared with what it must be.
// Written to tell whether wrong elements seen by ccbench's nccl-symm come from NCCL itself.
//
//   mpirun -np 2 build/nccl_symm_repro [calls]
// Prints one line per piece size and exits 1 if any output element was wrong.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#define CHECK_CUDA(x)                                                                 \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(e_));             \
      MPI_Abort(MPI_COMM_WORLD, 6);                                                   \
    }                                                                                 \
  } while (0)
#define CHECK_NCCL(x)                                                                 \
  do {                                                                                \
    ncclResult_t r_ = (x);                                                            \
    if (r_ != ncclSuccess) {                                                          \
      std::fprintf(stderr, "%s failed: %s\n", #x, ncclGetErrorString(r_));             \
      MPI_Abort(MPI_COMM_WORLD, 6);                                                   \
    }                                                                                 \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const int calls = argc > 1 ? std::atoi(argv[1]) : 20;
  int devices = 0;
  CHECK_CUDA(cudaGetDeviceCount(&devices));
  CHECK_CUDA(cudaSetDevice(rank % devices));
  ncclUniqueId id;
  if (rank == 0) CHECK_NCCL(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, nranks, id, rank));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));

  // Piece sizes in bytes of one rank's input: multiples of 16 and not.
  const std::vector<size_t> pieces = {16, 36, 1024, 1028, 8744, 8752, 65536, 65540, 1 << 20, (1 << 20) + 4};
  const size_t max_piece = (1 << 20) + 16;
  void *send = nullptr, *recv = nullptr;
  CHECK_NCCL(ncclMemAlloc(&send, max_piece));
  CHECK_NCCL(ncclMemAlloc(&recv, max_piece * nranks));
  ncclWindow_t wsend, wrecv;
  CHECK_NCCL(ncclCommWindowRegister(comm, send, max_piece, &wsend, NCCL_WIN_COLL_SYMMETRIC));
  CHECK_NCCL(ncclCommWindowRegister(comm, recv, max_piece * nranks, &wrecv, NCCL_WIN_COLL_SYMMETRIC));

  long long total_wrong = 0;
  for (size_t piece : pieces) {
    for (int mode = 0; mode < 2; ++mode) {  // 0: one call checked at a time, 1: `calls` back to back
      const size_t n = piece;               // int8 elements
      std::vector<std::uint8_t> mine(n), out(n * nranks);
      for (size_t i = 0; i < n; ++i) mine[i] = static_cast<std::uint8_t>((rank * 131 + i * 7) & 0xff);
      CHECK_CUDA(cudaMemcpy(send, mine.data(), n, cudaMemcpyHostToDevice));
      CHECK_CUDA(cudaMemset(recv, 0xEE, n * nranks));
      CHECK_CUDA(cudaDeviceSynchronize());
      MPI_Barrier(MPI_COMM_WORLD);
      const int repeat = mode == 0 ? 1 : calls;
      for (int c = 0; c < repeat; ++c) CHECK_NCCL(ncclAllGather(send, recv, n, ncclInt8, comm, stream));
      CHECK_CUDA(cudaStreamSynchronize(stream));
      CHECK_CUDA(cudaMemcpy(out.data(), recv, n * nranks, cudaMemcpyDeviceToHost));
      long long wrong = 0, first = -1;
      for (int r = 0; r < nranks; ++r)
        for (size_t i = 0; i < n; ++i)
          if (out[r * n + i] != static_cast<std::uint8_t>((r * 131 + i * 7) & 0xff)) {
            if (first < 0) first = static_cast<long long>(r * n + i);
            ++wrong;
          }
      long long all = 0;
      MPI_Allreduce(&wrong, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      total_wrong += all;
      if (rank == 0) {
        char where[64] = "";
        if (first >= 0) std::snprintf(where, sizeof where, ", rank 0's first at index %lld", first);
        std::printf("piece %8zu B (%s16 B multiple), %3d call%s: %lld wrong elements%s\n", piece,
                    piece % 16 ? "not a " : "a ", repeat, repeat == 1 ? " " : "s", all, where);
      }
    }
  }
  CHECK_NCCL(ncclCommWindowDeregister(comm, wsend));
  CHECK_NCCL(ncclCommWindowDeregister(comm, wrecv));
  ncclMemFree(send);
  ncclMemFree(recv);
  ncclCommDestroy(comm);
  int version = 0;
  ncclGetVersion(&version);
  if (rank == 0) std::printf("NCCL %d: %lld wrong elements in all\n", version, total_wrong);
  MPI_Finalize();
  return total_wrong ? 1 : 0;
}
