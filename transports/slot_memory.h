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
  // As allocate(), in whole huge pages (kHugePageBytes, aligned to one) the kernel is asked to
  // back with transparent huge pages (MADV_HUGEPAGE; only advice: where THP is off, small pages).
  // For slots another process writes through process_vm_writev, which pins the target's pages on
  // every call: one page-table walk per huge page instead of one per 4 KiB (transports/ofi).
  static constexpr std::size_t kHugePageBytes = 2u << 20;
  void allocate_huge(std::size_t slot_bytes, int depth);
  char* slot(std::size_t i) const { return base.get() + i * stride; }
};

}  // namespace ccbench
