#pragma once
// The CPU's side of FIFO counters in pinned memory that a GPU (or a peer process) also addresses:
// an acquire load before reading a slot, a release store after writing one. Through
// std::atomic_ref, so that C++'s memory model orders them (on x86 both are plain moves; the
// compiler may neither tear nor reorder them).
//
// std::atomic_ref on an object off its required alignment (8 bytes) is undefined: a counter
// straddling two cache lines can tear. Where counters are laid out, their offsets are checked
// statically (kHostFlagAlign divides the line sizes: gpu_mesh.h, gpu_host_ce.h) and the pointers
// handed to a CPU proxy when it starts (require_flag_aligned: fifo_stage.cpp, gpu_net.cpp).
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/error.h"

namespace ccbench {

static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free, "FIFO counters need lock-free 64-bit atomics");
inline constexpr std::size_t kHostFlagAlign = std::atomic_ref<std::uint64_t>::required_alignment;

// Throws Error(runtime) naming `what` (the counter and its FIFO) when `p` is off kHostFlagAlign.
inline void require_flag_aligned(const volatile std::uint64_t* p, const char* what) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  if (at % kHostFlagAlign != 0)
    fail(ExitCode::runtime, "FIFO counter {} at {:#x} is not {}-byte aligned, as the CPU's atomic access to it needs",
         what, at, kHostFlagAlign);
}

inline std::uint64_t host_load_acquire(const volatile std::uint64_t* p) {
  return std::atomic_ref<std::uint64_t>(*const_cast<std::uint64_t*>(p)).load(std::memory_order_acquire);
}
inline void host_store_release(volatile std::uint64_t* p, std::uint64_t v) {
  std::atomic_ref<std::uint64_t>(*const_cast<std::uint64_t*>(p)).store(v, std::memory_order_release);
}

}  // namespace ccbench
