// The --overlap load driven directly (harness/overlap/overlap.h, overlap_job.h), without the harness's
// sweep, under mpirun on one GPU (label gpu1). Three checks, one per first argument:
//   sharers LOAD...  (2+ ranks on one GPU) the job's load alone, every sharer loading at once, per
//                    GPU; then rows without a collective: the same start / window / stop as a
//                    row's timed batch with nothing in the window. They must keep the rate alone
//                    (within kNoLossTolerance): nothing is lost when nothing runs beside the load.
//                    For contrast, the rate alone one rank at a time (what ccbench measured before
//                    per-GPU figures) is printed beside it.
//   launches LOAD... (1 rank) rows of a small load until >= kManyLaunches launches: the process's
//                    resident memory and the GPU's free memory stay flat (within kFlatBytes), and
//                    the fed rate keeps a plain back-to-back loop's (within kFeederTolerance, the median
//                    of kRatePairs alternating pairs).
//   room             (1 rank) a grid shaped like a collective's (tests/gpu/spin_grid.h: blocks that
//                    hold a whole SM and wait for each other) on a highest-priority stream beside
//                    membw and gemm, with the default room and with none: its time beside the load
//                    against alone. Beside membw with room it must keep its time alone (within
//                    kRoomSlack); beside gemm it must not wait for the GEMM to end.
// Exit 0 when every check holds, 1 naming the one that did not, 77 without a GPU.
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/checks_cuda.h"
#include "core/cuda_stream.h"
#include "core/error.h"
#include "harness/overlap/cublas_library.h"
#include "harness/overlap/overlap.h"
#include "harness/overlap/overlap_job.h"
#include "harness/overlap/overlap_kernels.h"
#include "results/stats.h"
#include "tests/gpu/direct_rank.h"
#include "tests/gpu/spin_grid.h"

namespace {

using namespace ccbench;
using Clock = std::chrono::steady_clock;

constexpr double kNoLossTolerance = 0.05;  // during / alone with nothing beside the load
constexpr int kEmptyRows = 3;
constexpr std::chrono::milliseconds kRowWindow{300};
constexpr std::uint64_t kManyLaunches = 100'000;
constexpr long kFlatBytes = 4l << 20;      // growth allowed over the rows (the old pool grew 2 events a launch)
constexpr double kFeederTolerance = 0.10;  // fed rate / plain loop (the old feeder: several times slower)
constexpr int kRatePairs = 5;              // fed rows and plain loops, alternating
constexpr double kPlainSeconds = 0.1;      // one plain loop, as long as one fed row (kLaunchRow)
constexpr std::chrono::milliseconds kLaunchRow{100};
constexpr int kSpinRounds = 50;
constexpr double kRoomSlack = 3.0;  // beside membw with room: median <= 3x alone + kRoomFloorUs
constexpr double kRoomFloorUs = 20.0;
// Beside gemm with room: median <= a quarter of a GEMM. A grid that had to wait for a GEMM holding
// every SM to end would wait half of one at the median (it arrives at a random point).
constexpr double kGemmWaitShare = 0.25;
constexpr long long kSpinTimeoutCycles = 4'000'000'000ll;  // ~2 s at 1.98 GHz: never in a passing run

int failures = 0;

void check(bool ok, int rank, const std::string& what) {
  std::printf("rank %d: %s: %s\n", rank, ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++failures;
}

// One row's timed part with no collective: the load fed, the window marked on a stream of the
// collectives' kind with nothing on it, for kRowWindow.
double empty_row(OverlapLoad& load, cudaStream_t stream) {
  load.start();
  MPI_Barrier(MPI_COMM_WORLD);
  load.window_begin(stream);
  std::this_thread::sleep_for(kRowWindow);
  load.window_end(stream);
  MPI_Barrier(MPI_COMM_WORLD);
  return load.stop();
}

// The rate alone one rank at a time (ranks of the GPU taking turns), the mean over the ranks.
double alone_by_turns(OverlapLoad& load, int rank, int nranks) {
  double mine = 0;
  for (int t = 0; t < nranks; ++t) {
    if (t == rank) {
      load.start();
      load.window_begin(nullptr);
      std::this_thread::sleep_for(kAloneWindow);
      load.window_end(nullptr);
      mine = load.stop();
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  double sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum / nranks;
}

void sharers(const std::string& text, int rank, int nranks) {
  const RankLayout layout =
      RankLayout::from_hosts(rank, std::vector<std::string>(static_cast<std::size_t>(nranks), "h"));
  JobLoad job = open_job_load(parse_overlap(text), Device::gpu, MPI_COMM_WORLD, layout, 0);
  const char* unit = load_unit(job.spec);
  cudaStream_t collectives = create_stream(StreamPriority::highest);
  std::vector<double> during;
  for (int i = 0; i < kEmptyRows; ++i) during.push_back(job.per_gpu(MPI_COMM_WORLD, empty_row(*job.load, collectives)));
  const double by_turns = alone_by_turns(*job.load, rank, nranks);
  measure_alone_again(job, MPI_COMM_WORLD, rank);
  cudaStreamDestroy(collectives);
  if (rank != 0) return;
  std::sort(during.begin(), during.end());
  const double median = during[during.size() / 2], lost = 1 - median / job.alone;
  std::printf(
      "%s, %d ranks on %d GPU: alone %.1f %s per GPU (every rank loading), rows without a collective %.1f / "
      "%.1f / %.1f (median %.1f: %.1f %% lost), alone after them %.1f; one rank at a time %.1f per rank, "
      "which per rank would show %.1f %% lost\n",
      load_label(job.spec).c_str(), nranks, job.gpus, job.alone, unit, during[0], during[1], during[2], median,
      100 * lost, job.alone_end.value_or(0), by_turns, 100 * (1 - median / nranks / by_turns));
  check(job.gpus == 1, rank, "the ranks share one GPU, counted once");
  check(job.alone > 0 && median > 0, rank, "rates measured");
  check(std::abs(lost) <= kNoLossTolerance, rank,
        "no loss without a collective: |1 - during / alone| = " + std::to_string(std::abs(lost)));
}

long resident_bytes() {
  std::ifstream f("/proc/self/status");
  std::string key;
  long kb = 0;
  while (f >> key)
    if (key == "VmRSS:" && f >> kb) return kb * 1024;
  return 0;
}

std::size_t gpu_free_bytes() {
  std::size_t free = 0, total = 0;
  CCB_CUDA(cudaMemGetInfo(&free, &total));
  return free;
}

// The same launches as the load's, queued back to back with no feeder: work per second.
double plain_loop(const OverlapSpec& spec, int sms, double seconds_hint) {
  cudaStream_t s = create_stream(StreamPriority::lowest);
  std::vector<void*> buffers;
  const std::size_t bytes = spec.kind == LoadKind::gemm ? spec.size * spec.size * 2 : spec.size;
  for (int i = 0; i < (spec.kind == LoadKind::gemm ? 3 : 2); ++i) {
    buffers.push_back(nullptr);
    CCB_CUDA(cudaMalloc(&buffers.back(), bytes));
    CCB_CUDA(static_cast<cudaError_t>(overlap::fill_bf16(buffers.back(), bytes / 2, 7u + i, s)));
  }
  const CublasApi* blas = spec.kind == LoadKind::gemm ? &cublas() : nullptr;
  cublasHandle_t h = nullptr;
  if (blas) {
    CCB_CUBLAS(blas->Create(&h));
    CCB_CUBLAS(blas->SetStream(h, s));
    if (spec.room_sms > 0) CCB_CUBLAS(blas->SetSmCountTarget(h, sms - spec.room_sms));
  }
  std::size_t smem = 0;
  if (!blas) CCB_CUDA(static_cast<cudaError_t>(overlap::copy_block_smem(&smem)));
  auto launch = [&] {
    if (!blas) {
      CCB_CUDA(static_cast<cudaError_t>(
          overlap::launch_copy(buffers[0], buffers[1], spec.size, sms - spec.room_sms, smem, s)));
      return;
    }
    const int n = static_cast<int>(spec.size);
    const float alpha = 1, beta = 0;
    CCB_CUBLAS(blas->GemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, buffers[0], CUDA_R_16BF, n, buffers[1],
                            CUDA_R_16BF, n, &beta, buffers[2], CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
  };
  for (int i = 0; i < 100; ++i) launch();  // warm-up
  cudaEvent_t b, e;
  CCB_CUDA(cudaEventCreate(&b));
  CCB_CUDA(cudaEventCreate(&e));
  const auto until = Clock::now() + std::chrono::duration<double>(seconds_hint);
  std::uint64_t n = 0;
  CCB_CUDA(cudaEventRecord(b, s));
  while (Clock::now() < until) {
    for (int i = 0; i < 64; ++i) launch();
    n += 64;
  }
  CCB_CUDA(cudaEventRecord(e, s));
  CCB_CUDA(cudaEventSynchronize(e));
  float ms = 0;
  CCB_CUDA(cudaEventElapsedTime(&ms, b, e));
  if (h) blas->Destroy(h);
  for (void* p : buffers) cudaFree(p);
  cudaEventDestroy(b);
  cudaEventDestroy(e);
  cudaStreamDestroy(s);
  return static_cast<double>(n) * load_work(spec) / (ms / 1000.0);
}

void launches(const std::string& text, int rank) {
  const OverlapSpec spec = parse_overlap(text);
  auto load = make_gpu_load(spec, 0);
  auto row = [&] {
    load->start();
    load->window_begin(nullptr);
    std::this_thread::sleep_for(kLaunchRow);
    load->window_end(nullptr);
    return load->stop();
  };
  row();  // the first row settles the driver's own allocations
  const long rss0 = resident_bytes();
  const std::size_t free0 = gpu_free_bytes();
  std::uint64_t total = 0;
  int rows = 0;
  std::vector<double> rates;
  const auto t0 = Clock::now();
  while (total < kManyLaunches || rows < 10) {
    rates.push_back(row());
    total += load->launches();
    ++rows;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const long grew = resident_bytes() - rss0;
  const long gpu_grew = static_cast<long>(free0) - static_cast<long>(gpu_free_bytes());
  // The fed rate against a plain loop's in alternating pairs: both are bound by the host's launch
  // rate at these sizes, which drifts from one second to the next (h200x1-20261203-r36: six plain
  // loops of membw 1M ran at 449-578 GB/s; one loop against the rows' median read 0.85 where the
  // next five pairs read 0.94-1.01).
  std::vector<double> fed_over_plain;
  for (int i = 0; i < kRatePairs; ++i) fed_over_plain.push_back(row() / plain_loop(spec, load->sms(), kPlainSeconds));
  const double fed = median_of(rates), ratio = median_of(fed_over_plain);
  std::printf(
      "%s: %llu launches in %d rows over %.1f s; resident memory %+ld B, GPU memory %+ld B; fed %.2f %s "
      "(median row); fed / plain back-to-back loop, median of %d pairs %.3f (%.3f to %.3f)\n",
      load_label(spec).c_str(), static_cast<unsigned long long>(total), rows, seconds, grew, gpu_grew, fed,
      load_unit(spec), kRatePairs, ratio, *std::min_element(fed_over_plain.begin(), fed_over_plain.end()),
      *std::max_element(fed_over_plain.begin(), fed_over_plain.end()));
  check(total >= kManyLaunches, rank, load_label(spec) + ": at least 100000 launches");
  check(grew <= kFlatBytes && gpu_grew <= kFlatBytes, rank, load_label(spec) + ": memory flat");
  check(ratio >= 1 - kFeederTolerance, rank, load_label(spec) + ": the feeder keeps a plain loop's rate");
}

struct SpinTimes {
  double median_us = 0, max_us = 0;
  bool timed_out = false;
};

// kSpinRounds grids of `blocks` on a highest-priority stream, one after another.
SpinTimes spin_rounds(int blocks) {
  cudaStream_t s = create_stream(StreamPriority::highest);
  unsigned* counter = nullptr;
  int* timed_out = nullptr;
  CCB_CUDA(cudaMalloc(&counter, sizeof(unsigned)));
  CCB_CUDA(cudaMalloc(&timed_out, sizeof(int)));
  CCB_CUDA(cudaMemsetAsync(counter, 0, sizeof(unsigned), s));
  CCB_CUDA(cudaMemsetAsync(timed_out, 0, sizeof(int), s));
  cudaEvent_t b, e;
  CCB_CUDA(cudaEventCreate(&b));
  CCB_CUDA(cudaEventCreate(&e));
  std::vector<double> us;
  for (int round = 0; round < kSpinRounds; ++round) {
    CCB_CUDA(cudaEventRecord(b, s));
    CCB_CUDA(spin::launch(blocks, round, counter, timed_out, kSpinTimeoutCycles, s));
    CCB_CUDA(cudaEventRecord(e, s));
    CCB_CUDA(cudaEventSynchronize(e));
    float ms = 0;
    CCB_CUDA(cudaEventElapsedTime(&ms, b, e));
    us.push_back(1000.0 * ms);
    std::this_thread::sleep_for(std::chrono::microseconds(500));  // arrive at a random point of the load
  }
  int late = 0;
  CCB_CUDA(cudaMemcpy(&late, timed_out, sizeof(int), cudaMemcpyDeviceToHost));
  cudaFree(counter);
  cudaFree(timed_out);
  cudaEventDestroy(b);
  cudaEventDestroy(e);
  cudaStreamDestroy(s);
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us.back(), late != 0};
}

void room(int rank) {
  const int regs = spin::registers();
  check(regs * spin::kSpinThreads >= 65536, rank,
        "a spin block holds a whole SM's registers (" + std::to_string(regs) + " x 1024)");
  const int blocks = kDefaultRoomSms;
  const SpinTimes alone = spin_rounds(blocks);
  std::printf("spin grid of %d whole-SM blocks alone: median %.1f us, max %.1f us\n", blocks, alone.median_us,
              alone.max_us);
  for (const char* text : {"membw", "gemm"}) {
    for (int room_sms : {kDefaultRoomSms, 0}) {
      OverlapSpec spec = parse_overlap(text);
      spec.room_sms = room_sms;
      auto load = make_gpu_load(spec, 0);
      load->start();
      load->window_begin(nullptr);
      const SpinTimes beside = spin_rounds(blocks);
      load->window_end(nullptr);
      const double rate = load->stop();
      const double launch_us = 1e6 * load_work(spec) / rate;
      std::printf(
          "beside %s (load %.1f %s, %.0f us a launch): spin grid median %.1f us, max %.1f us (%.2f of its "
          "time alone)\n",
          load_label(spec).c_str(), rate, load_unit(spec), launch_us, beside.median_us, beside.max_us,
          alone.median_us / beside.median_us);
      check(!beside.timed_out, rank, load_label(spec) + ": every spin grid became resident");
      if (room_sms == 0) continue;
      if (spec.kind == LoadKind::membw)
        check(beside.median_us <= kRoomSlack * alone.median_us + kRoomFloorUs, rank,
              load_label(spec) + ": the collective's grid starts as if alone");
      else
        check(beside.median_us <= kGemmWaitShare * launch_us, rank,
              load_label(spec) + ": the grid does not wait for the GEMM to end");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return direct::mpi_main(argc, argv, [&](int rank, int nranks) {
    CCB_CUDA(cudaSetDevice(0));
    if (args.empty()) throw Error(ExitCode::usage, "usage: overlap_load sharers|launches LOAD... | room");
    if (args[0] == "sharers") {
      if (nranks < 2) throw Error(ExitCode::usage, "sharers needs 2 or more ranks on one GPU");
      for (std::size_t i = 1; i < args.size(); ++i) sharers(args[i], rank, nranks);
    } else if (args[0] == "launches") {
      for (std::size_t i = 1; i < args.size(); ++i) launches(args[i], rank);
    } else if (args[0] == "room") {
      room(rank);
    } else {
      throw Error(ExitCode::usage, "unknown check '" + args[0] + "' (valid: sharers, launches, room)");
    }
    return failures ? 1 : 0;
  });
}
