#pragma once
// A compute load beside the collectives (`ccbench run --overlap KIND[:SIZE]`), as training runs
// all-reduce and all-gather while GEMMs run: on every GPU rank, a load of its own on its own
// stream, kept busy by a feeder thread through the whole timed part of every row (the timed
// batch and the single iterations; not the CUDA-graph replays or the energy window). A row then
// reports the collective under load, and the load's throughput alone and during the row's timed
// batch, so that implementations can be compared on bandwidth kept and compute lost.
//   gemm[:N]   cuBLAS bf16 GEMM, m = n = k = N [8192], fp32 accumulation, in TFLOPS (2 N^3 per
//              GEMM), on random inputs in [-1, 1) (never zeros: on an H200 a GEMM of zeros ran
//              14-20 % faster drawing ~420 W, where random inputs meet the 700 W cap); cuBLAS
//              is loaded at run time (harness/overlap/cublas_library.h)
//   membw[:S]  a copy kernel of ours between two buffers of S bytes [1G], in GB/s (read + written)
//
// Alone and during are measured the same way: the feeder running, a window marked with CUDA
// events, every launch counted for the part of it inside the window. Alone has nothing in the
// window, and every rank sharing a GPU loads it at once (as during the rows), so figures are per
// GPU: the sum over the ranks sharing it, the mean over the job's GPUs. Alone is measured before
// the rows and again after them (a GPU warm and at its power cap, as during the rows).
//
// The load yields to the collectives: its stream has the device's lowest priority (theirs the
// highest: core/cuda_stream.h), and it leaves `room_sms` SMs free (--overlap-room): a block of
// ours holds a whole SM (up to 128 registers x 512 threads), as NCCL's do, and a block already
// running is never preempted, so without free SMs a collective's blocks wait for the load's to
// retire (a grid-stride copy or a persistent GEMM: the whole kernel). Our kernels' grids are
// capped to those SMs while a load runs (ImplContext::collective_sms).
//
// CPU ranks refuse it: --device cpu is a usage error (exit 2), CPU ranks found at run time a
// precondition error (exit 3), before anything is measured, because rows measured without the
// load that was asked for would be mislabelled, and there is no load to run beside CPU collectives.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "harness/engine/overlap_spec.h"

namespace ccbench {

// How the feeder queues launches, from one launch's time alone: launches go in spans of
// `launches_per_span` between two CUDA events (a span of at least kSpanMs, so that small launches,
// whose issue is host-bound, pay two event records per ~20 launches of ~10 us rather than per
// launch), and `spans_ahead` spans are queued ahead of the GPU (at least
// kAheadMs of work, so a feeder thread that loses its core for a scheduler slice leaves no gap).
// The events live in a ring of kRingSpans pairs: memory stays flat however many launches run.
inline constexpr double kSpanMs = 0.2;
inline constexpr double kAheadMs = 5.0;  // above Linux's 3-4 ms scheduler slices at 2 tasks per core
inline constexpr int kRingSpans = 256;
struct FeedPlan {
  int launches_per_span = 1;
  int spans_ahead = 2;
};
FeedPlan feed_plan(double launch_ms);

// The load's work inside a window [begin mark, end mark], counted as spans of launches complete,
// in order, without keeping them: each span adds its work to what was done before each mark, in
// proportion to the part of it before the mark (a span straddling a mark ran at an even rate).
// A mark whose time is not known yet when a span is added lies after that span (the caller
// learns a mark's time only once its event completed after the span's end had).
class WindowWork {
 public:
  // `at` the marks' times (ms from the spans' origin), those known now.
  void add(double begin_ms, double end_ms, double work, const std::array<std::optional<double>, 2>& at);
  // The work per second between the marks (times in ms); 0 when the window is empty.
  double rate(const std::array<std::optional<double>, 2>& at) const;

 private:
  std::array<double, 2> before_{};  // work done before each mark
  std::array<bool, 2> settled_{};   // a span reached past the mark: later ones add nothing
};

// One GPU rank's load (harness/overlap/overlap_gpu.cpp). Every call from the thread that runs the
// collectives; the feeder thread is the load's own.
class OverlapLoad {
 public:
  virtual ~OverlapLoad() = default;
  // Starts feeding launches; returns once the first is running on the GPU.
  virtual void start() = 0;
  // The window the rate is taken over, marked on `stream` (cudaStream_t: the collectives'), or
  // with nullptr on an idle stream of the load's own (the window of the rate alone). After start().
  virtual void window_begin(void* stream) = 0;
  virtual void window_end(void* stream) = 0;
  // Stops feeding and waits for the launches in flight; the rate during the window marked since
  // start() (0 when none was).
  virtual double stop() = 0;
  // Launches since the last start().
  virtual std::uint64_t launches() const = 0;
  // The GPU's SMs, and how many the load leaves free (spec.room_sms).
  virtual int sms() const = 0;
};

// The load of `spec` on `cuda_device`: buffers, cuBLAS handle, stream, and one launch's time
// (a few launches, the first ones warm-up). Throws Error(precondition) when it cannot run (no
// cuBLAS, out of memory), Error(usage) for a room of as many SMs as the GPU has or more, and
// Error(usage) without CUDA built in.
std::unique_ptr<OverlapLoad> make_gpu_load(const OverlapSpec& spec, int cuda_device);

}  // namespace ccbench
