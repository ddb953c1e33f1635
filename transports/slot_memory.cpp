#include "transports/slot_memory.h"

#include <cstdlib>

#include <sys/mman.h>

#include "core/error.h"

namespace ccbench {

void SlotMemory::Free::operator()(char* p) const { std::free(p); }

namespace {

// posix_memalign'd memory (freed by Free); Error(precondition) when out of memory.
char* aligned(std::size_t alignment, std::size_t bytes, std::size_t slot_bytes, int depth) {
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes) != 0)
    fail(ExitCode::precondition, "out of host memory allocating {} channel slots of {} bytes", depth, slot_bytes);
  return static_cast<char*>(p);
}

}  // namespace

void SlotMemory::allocate(std::size_t slot_bytes, int depth) {
  stride = (slot_bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  base.reset(aligned(kPageBytes, stride * static_cast<std::size_t>(depth), slot_bytes, depth));
}

void SlotMemory::allocate_huge(std::size_t slot_bytes, int depth) {
  stride = (slot_bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  const std::size_t bytes =
      (stride * static_cast<std::size_t>(depth) + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  base.reset(aligned(kHugePageBytes, bytes, slot_bytes, depth));
  (void)madvise(base.get(), bytes, MADV_HUGEPAGE);  // advice only: small pages where THP is off
}

}  // namespace ccbench
