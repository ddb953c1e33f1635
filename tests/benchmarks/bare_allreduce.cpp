// A bare MPI_Allreduce loop timed as ccbench's back-to-back batch (harness/engine/runner.cpp): W warm-up
// calls, MPI_Barrier, N calls between two steady_clock reads, the slowest rank's time divided by
// N. Buffers as ccbench's: page-aligned, out-of-place, float sum on a duplicated communicator,
// small-integer inputs. Repeated R times; each figure printed on its own line.
// Usage: mpirun -np 2 bare_allreduce [-b BYTES] [-n N] [-w W] [-r R]
// Output (rank 0): "bare_allreduce bytes=B n=N w=W ranks=P" then "time_avg_us T" per repetition.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <mpi.h>

namespace ccbench {
namespace {

struct Args {
  long long bytes = 1 << 20;
  int n = 100, w = 5, r = 5;
};

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    char* end = nullptr;
    const long long v = std::strtoll(argv[i + 1], &end, 10);
    if (*end != '\0' || v < 0) return false;
    if (k == "-b") a.bytes = v;
    else if (k == "-n") a.n = static_cast<int>(v);
    else if (k == "-w") a.w = static_cast<int>(v);
    else if (k == "-r") a.r = static_cast<int>(v);
    else return false;
  }
  return argc % 2 == 1 && a.n > 0 && a.bytes >= 4 && a.bytes % 4 == 0;
}

void* page_aligned(std::size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, bytes) != 0) MPI_Abort(MPI_COMM_WORLD, 3);
  return p;
}

int run(int argc, char** argv) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Args a;
  if (!parse(argc, argv, a)) {
    if (rank == 0)
      std::fprintf(stderr, "usage: bare_allreduce [-b BYTES (multiple of 4)] [-n ITERS >= 1] [-w WARMUP] [-r REPEATS]\n");
    return 2;
  }
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const int count = static_cast<int>(a.bytes / 4);
  auto* send = static_cast<float*>(page_aligned(static_cast<std::size_t>(a.bytes)));
  auto* recv = static_cast<float*>(page_aligned(static_cast<std::size_t>(a.bytes)));
  for (int i = 0; i < count; ++i) send[i] = static_cast<float>((i + rank) % 7 - 3);
  std::memset(recv, 0xA5, static_cast<std::size_t>(a.bytes));

  if (rank == 0) std::printf("bare_allreduce bytes=%lld n=%d w=%d ranks=%d\n", a.bytes, a.n, a.w, size);
  for (int rep = 0; rep < a.r; ++rep) {
    for (int i = 0; i < a.w; ++i) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, comm);
    MPI_Barrier(comm);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < a.n; ++i) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, comm);
    const auto t1 = std::chrono::steady_clock::now();
    double us = std::chrono::duration<double, std::micro>(t1 - t0).count() / a.n, slowest = 0;
    MPI_Allreduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (rank == 0) std::printf("time_avg_us %.3f\n", slowest);
    std::fflush(stdout);
  }
  // The result must be the sum over ranks, or the loop measured something else.
  long long wrong = 0;
  for (int i = 0; i < count; ++i) {
    float expected = 0;
    for (int r = 0; r < size; ++r) expected += static_cast<float>((i + r) % 7 - 3);
    wrong += recv[i] != expected;
  }
  long long total = 0;
  MPI_Allreduce(&wrong, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
  if (rank == 0 && total) std::fprintf(stderr, "bare_allreduce: %lld wrong elements\n", total);
  std::free(send);
  std::free(recv);
  MPI_Comm_free(&comm);
  return total ? 1 : 0;
}

}  // namespace
}  // namespace ccbench

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = ccbench::run(argc, argv);
  MPI_Finalize();
  return rc;
}
