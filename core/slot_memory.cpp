#include "core/slot_memory.h"

#include <cstdlib>

#include "core/error.h"

namespace ccbench {

void SlotMemory::Free::operator()(char* p) const { std::free(p); }

void SlotMemory::allocate(std::size_t slot_bytes, int depth) {
  stride = (slot_bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  void* p = nullptr;
  if (posix_memalign(&p, kPageBytes, stride * static_cast<std::size_t>(depth)) != 0)
    fail(ExitCode::precondition, "out of host memory allocating {} channel slots of {} bytes", depth, slot_bytes);
  base.reset(static_cast<char*>(p));
}

}  // namespace ccbench
