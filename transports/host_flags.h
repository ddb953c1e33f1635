#pragma once
// The CPU's side of FIFO counters in pinned memory that a GPU (or a peer process) also addresses:
// an acquire load before reading a slot, a release store after writing one. Through
// std::atomic_ref, so that C++'s memory model orders them (on x86 both are plain moves; the
// compiler may neither tear nor reorder them). The counters are 8-byte aligned 64-bit words.
#include <atomic>
#include <cstdint>

namespace ccbench {

static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free, "FIFO counters need lock-free 64-bit atomics");

inline std::uint64_t host_load_acquire(const volatile std::uint64_t* p) {
  return std::atomic_ref<std::uint64_t>(*const_cast<std::uint64_t*>(p)).load(std::memory_order_acquire);
}
inline void host_store_release(volatile std::uint64_t* p, std::uint64_t v) {
  std::atomic_ref<std::uint64_t>(*const_cast<std::uint64_t*>(p)).store(v, std::memory_order_release);
}

}  // namespace ccbench
