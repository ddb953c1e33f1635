#pragma once
// Owners of the CUDA resources the GPU implementations hold: device copies of host tables,
// zeroed step counters that persist across launches, and the host-mapped device-error record.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "collectives/gpu/kernel_args.h"
#include "core/checks_cuda.h"

namespace ccbench::gpu {

// Device memory holding a copy of a host array (connection tables).
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(const std::vector<T>& host) {
    CCB_CUDA(cudaMalloc(&ptr_, std::max<std::size_t>(1, host.size()) * sizeof(T)));
    if (!host.empty()) CCB_CUDA(cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DeviceArray() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceArray(DeviceArray&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    return *this;
  }
  const T* get() const { return ptr_; }

 private:
  T* ptr_ = nullptr;
};

// Zeroed device counters (steps, epochs) that persist across launches.
class DeviceCounters {
 public:
  explicit DeviceCounters(std::size_t n);
  ~DeviceCounters();
  DeviceCounters(const DeviceCounters&) = delete;
  DeviceCounters& operator=(const DeviceCounters&) = delete;
  std::uint64_t* at(std::size_t i) const { return ptr_ + i; }

 private:
  std::uint64_t* ptr_ = nullptr;
};

// The device-error record kernels write and the host reads after synchronising.
class DeviceErrors {
 public:
  DeviceErrors();
  ~DeviceErrors();
  DeviceErrors(const DeviceErrors&) = delete;
  DeviceErrors& operator=(const DeviceErrors&) = delete;
  WaitLimits limits(std::chrono::milliseconds timeout) const {
    return {dev_, static_cast<std::uint64_t>(timeout.count()) * 1000000ull};
  }
  // Throws Error(timeout) describing the first failed wait, if a kernel recorded one.
  void check(const char* impl, int rank, std::chrono::milliseconds timeout) const;

 private:
  DeviceError* host_ = nullptr;
  DeviceError* dev_ = nullptr;
};

}  // namespace ccbench::gpu
