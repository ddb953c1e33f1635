#pragma once
// The sweep's buffers (harness/engine/runner.h): device memory with canary bytes before and after
// the data, so that a write past the bytes a collective may touch is found (the row fails with
// the count of damaged bytes, whatever -c says).
#include <cstddef>
#include <cstdint>

#include "collectives/implementation.h"
#include "harness/engine/backend.h"

namespace ccbench {

// Bytes of canary around every buffer; a write past the end of the data lands in them.
constexpr std::size_t kGuardBytes = 64 * 1024;
constexpr std::uint8_t kGuardValue = 0xC5;
// A device buffer with a guard region before and after the data; the trailing guard follows the
// bytes in use by the current measurement.
class GuardedBuffer {
 public:
  GuardedBuffer(Backend& b, Allocator* a, std::size_t capacity) : b_(b), a_(a), capacity_(capacity) {
    std::size_t total = capacity + 2 * kGuardBytes;
    raw_ = a_ ? a_->allocate(total) : b_.allocate(total);
    b_.fill_bytes(raw_, kGuardBytes, kGuardValue);
  }
  ~GuardedBuffer() {
    if (a_) a_->release(raw_);
    else b_.release(raw_);
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  std::byte* data() const { return static_cast<std::byte*>(raw_) + kGuardBytes; }
  std::size_t capacity() const { return capacity_; }
  // The measurement uses [data() + offset, data() + offset + used): the `offset` bytes before it
  // (-u) join the leading guard, and the trailing guard follows the bytes in use.
  void arm(std::size_t offset, std::size_t used) {
    offset_ = offset;
    used_ = used;
    if (offset) b_.fill_bytes(data(), offset, kGuardValue);
    b_.fill_bytes(data() + offset + used, kGuardBytes, kGuardValue);
  }
  // Damaged guard bytes before the data and after the bytes in use.
  std::uint64_t damaged() {
    return b_.count_bytes_not(raw_, kGuardBytes + offset_, kGuardValue) +
           b_.count_bytes_not(data() + offset_ + used_, kGuardBytes, kGuardValue);
  }

 private:
  Backend& b_;
  Allocator* a_;
  std::size_t capacity_;
  std::size_t offset_ = 0, used_ = 0;
  void* raw_ = nullptr;
};

}  // namespace ccbench
