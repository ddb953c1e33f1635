#pragma once
// The device side of a measurement: buffers, input patterns, checks and timers, for CPU ranks
// (host memory, steady clock) or GPU ranks (device memory, kernels, CUDA events on the rank's
// stream). The runner is written once against this interface.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "collectives/implementation.h"
#include "collectives/numeric.h"
#include "collectives/types.h"
#include "harness/engine/pattern.h"

namespace ccbench {

// Formats one element for messages (halves as their float value, bytes as numbers).
template <typename T>
std::string format_element(T v) {
  if constexpr (is_narrow_float<T>) return fmt::format("{}", v.to_float());
  else if constexpr (sizeof(T) == 1) return fmt::format("{}", static_cast<int>(v));
  else return fmt::format("{}", v);
}

// Result of a comparison: how many elements differ and the first of them.
struct Mismatches {
  std::uint64_t wrong = 0;
  std::uint64_t first_index = 0;
  std::string expected, actual;  // formatted values of the first wrong element
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  // Plain memory of the device (throws Error(precondition) when out of memory).
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* p) = 0;
  // All the calls below are ordered with the collectives on this rank (the GPU stream) and
  // complete before a result is returned to the host.
  // dst[i] = collective_input(spec, rank, index_base + i) for i < elements.
  virtual void fill_input(const PatternSpec& spec, void* dst, std::size_t elements, std::uint64_t index_base) = 0;
  // dst[j] = collective_expected(spec, j) for j < elements.
  virtual void fill_expected(const PatternSpec& spec, void* dst, std::size_t elements) = 0;
  virtual void fill_bytes(void* dst, std::size_t bytes, std::uint8_t value) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  // dst = ~src bytewise: an output poisoned this way differs from the expected one in every bit.
  virtual void complement(void* dst, const void* src, std::size_t bytes) = 0;
  // Number of bytes in [p, p+bytes) that differ from `value`.
  virtual std::uint64_t count_bytes_not(const void* p, std::size_t bytes, std::uint8_t value) = 0;
  // Elements of `actual` that do not match `expected` (value_matches).
  virtual Mismatches compare(const PatternSpec& spec, const void* expected, const void* actual,
                             std::size_t elements) = 0;
  // Elements of `buf` that differ from the input pattern (an input the collective must not touch).
  virtual Mismatches check_input(const PatternSpec& spec, const void* buf, std::size_t elements,
                                 std::uint64_t index_base) = 0;
  // Waits for everything queued on this rank.
  virtual void synchronize() = 0;

  // Timing: mark(i) records time point i (a CUDA event on the stream, or the steady clock);
  // elapsed_us(a, b) is the time between two marks, after synchronize().
  virtual void mark(int i) = 0;
  virtual double elapsed_us(int a, int b) = 0;
  static constexpr int kMaxMarks = 4;

  // A head start for single timed iterations. GPU: enqueues a kernel that keeps the stream busy
  // for `us` microseconds, so that the host has queued the collective behind it before it starts
  // and the launch latency stays out of the time; it holds nothing the host must release (a
  // blocking NCCL call cannot deadlock on it). CPU: nothing.
  virtual void head_start(double /*us*/) {}

  // The slow fault (harness/engine/fault.h): this rank's part of a call ends `ms` milliseconds late. CPU:
  // the rank sleeps. GPU: a kernel keeps the stream busy that long, so that the delay is inside
  // the timed marks and inside a captured CUDA graph.
  virtual void delay(int ms) = 0;

  // CUDA-graph capture of the calls made between begin_capture() and end_capture(); replay()
  // launches the captured graph. CPU backends throw Error(precondition).
  virtual void begin_capture() = 0;
  virtual void end_capture() = 0;
  virtual void replay() = 0;
  virtual void drop_capture() = 0;

  // Memory this rank could still allocate, in bytes (device memory, or the host's available
  // memory divided among the ranks of the node by the caller).
  virtual std::uint64_t available_memory() const = 0;
  // Facts for the context block (GPU name, driver, ...).
  virtual std::string description() const = 0;
};

std::unique_ptr<Backend> make_cpu_backend();
// GPU backend on `cuda_device` with its own stream (ctx.stream for implementations).
// Throws Error(precondition) when this build has no CUDA or the device cannot be used.
std::unique_ptr<Backend> make_gpu_backend(int cuda_device);
// Whether this build has CUDA and the node has at least one usable GPU; `why` says otherwise.
int gpu_count(std::string* why);
// The CUDA stream of a GPU backend (nullptr for CPU).
void* backend_stream(Backend& b);

}  // namespace ccbench
