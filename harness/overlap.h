#pragma once
// A compute load beside the collectives (`ccbench run --overlap KIND[:SIZE]`), as training runs
// all-reduce and all-gather while GEMMs run: on every GPU rank, a load of its own on its own
// stream, kept busy by a feeder thread through the whole timed part of every row (the timed
// batch and the single iterations; not the CUDA-graph replays or the energy window). A row then
// reports the collective under load, and the load's throughput alone (measured once at start,
// the ranks of one GPU one after another) and during the row's timed batch, each the mean over
// the GPU ranks, so that implementations can be compared on bandwidth kept and compute lost.
//   gemm[:N]   cuBLAS bf16 GEMM, m = n = k = N [8192], fp32 accumulation, in TFLOPS (2 N^3 per
//              GEMM); cuBLAS is loaded at run time (harness/cublas_library.h)
//   membw[:S]  a copy kernel of ours between two buffers of S bytes [1G] on every SM, in GB/s
//              (read + written)
// CPU ranks refuse it: --device cpu is a usage error (exit 2), CPU ranks found at run time a
// precondition error (exit 3), before anything is measured, because rows measured without the
// load that was asked for would be mislabelled, and there is no load to run beside CPU collectives.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ccbench {

enum class LoadKind { none, gemm, membw };

struct OverlapSpec {
  LoadKind kind = LoadKind::none;
  std::uint64_t size = 0;  // gemm: N; membw: bytes per buffer
};

inline constexpr std::uint64_t kDefaultGemmN = 8192;    // ~1.3 ms per GEMM at 820 TFLOPS (H200)
inline constexpr std::uint64_t kDefaultMembwBytes = 1ull << 30;

// "gemm", "gemm:16384", "membw", "membw:2G", "" (none). Throws Error(usage) saying what is valid:
// gemm N from 256 to 65536, a multiple of 64; membw from 1 MiB to 64 GiB, a multiple of 16.
OverlapSpec parse_overlap(const std::string& text);
// What --overlap takes, for its help, the reference and parse_overlap's messages.
std::string overlap_valid();
// "gemm bf16 8192x8192x8192", "membw 1G"; "" for none.
std::string load_label(const OverlapSpec& s);
// "TFLOPS" or "GB/s".
const char* load_unit(const OverlapSpec& s);
// The work of one launch in load_unit() x 1e-6 s: TFLOP for gemm (2 N^3 / 1e12), GB for membw
// (2 S / 1e9), so work / seconds is the unit.
double load_work(const OverlapSpec& s);

// One launch of the load: when it started and ended (milliseconds from any common origin).
struct LaunchSpan {
  double begin_ms = 0, end_ms = 0;
};
// The load's rate during [window_begin, window_end] (ms): the work of every launch in proportion
// to the part of it inside the window, per second of window; nullopt-like 0 when the window is empty.
double rate_in_window(const std::vector<LaunchSpan>& launches, double work_per_launch, double window_begin_ms,
                      double window_end_ms);

// One GPU rank's load (harness/overlap_gpu.cpp). Every call from the thread that runs the
// collectives; the feeder thread is the load's own.
class OverlapLoad {
 public:
  virtual ~OverlapLoad() = default;
  // The rate alone: launches back to back for a while (~0.5 s), nothing else running here.
  virtual double measure_alone() = 0;
  // Starts feeding launches; returns once the first is running on the GPU.
  virtual void start() = 0;
  // The window the rate during is taken over, marked on the collectives' stream (cudaStream_t).
  virtual void window_begin(void* stream) = 0;
  virtual void window_end(void* stream) = 0;
  // Stops feeding and waits for the launches in flight; the rate during the last window (0 when
  // none was marked since start()).
  virtual double stop() = 0;
};

// The load of `spec` on `cuda_device`: buffers, cuBLAS handle, stream. Throws Error(precondition)
// when it cannot run (no cuBLAS, out of memory) and Error(usage) without CUDA built in.
std::unique_ptr<OverlapLoad> make_gpu_load(const OverlapSpec& spec, int cuda_device);

}  // namespace ccbench
