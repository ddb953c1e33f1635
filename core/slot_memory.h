#pragma once
// Page-aligned host memory for a channel's slots (transports: MPI, tcp). Slots are `stride`
// bytes apart, the slot size rounded up to whole pages, so that no two slots share a page (or a
// cache line) and MPI or the kernel can pin them without touching a neighbour.
#include <cstddef>
#include <memory>

namespace ccbench {

struct SlotMemory {
  // The alignment and stride unit: the x86-64 and aarch64 base page (4 KiB).
  static constexpr std::size_t kPageBytes = 4096;
  struct Free {
    void operator()(char* p) const;
  };
  std::unique_ptr<char, Free> base;
  std::size_t stride = 0;
  // `depth` slots of at least `slot_bytes` each; throws Error(precondition) when out of memory.
  void allocate(std::size_t slot_bytes, int depth);
  char* slot(std::size_t i) const { return base.get() + i * stride; }
};

}  // namespace ccbench
