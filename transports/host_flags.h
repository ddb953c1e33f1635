#pragma once
// The CPU's side of FIFO counters in pinned memory that a GPU also addresses: an acquire load
// before reading a slot, a release store after writing one (x86: plain accesses in order; the
// fences keep the compiler from moving them).
#include <atomic>
#include <cstdint>

namespace ccbench {

inline std::uint64_t host_load_acquire(const volatile std::uint64_t* p) {
  const std::uint64_t v = *p;
  std::atomic_thread_fence(std::memory_order_acquire);
  return v;
}
inline void host_store_release(volatile std::uint64_t* p, std::uint64_t v) {
  std::atomic_thread_fence(std::memory_order_release);
  *p = v;
}

}  // namespace ccbench
