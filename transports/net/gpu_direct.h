#pragma once
// GPUDirect RDMA on the GPU's side, for every transport whose NIC writes GPU memory (ib, ofi):
// whether this GPU and driver allow it, the dma-buf of a GPU range for a NIC to register, and the
// flush that makes the NIC's writes visible to the GPU's kernels. The CUDA driver calls are
// looked up at run time, so nothing links libcuda and the binaries start without a GPU driver.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ccbench {

// Why GPU memory cannot be handed to a NIC here (no CUDA in the build, a driver without dma-buf
// export or host-side flushes, `allowed` false for --gpudirect off), or nullopt when it can.
std::optional<std::string> gpudirect_unavailable_reason(bool allowed, int cuda_device);

// A dma-buf of GPU memory: the file descriptor (the caller closes it once registered) and the
// range it covers, [begin, begin + bytes): the asked range widened to whole host pages, as
// cuMemGetHandleForAddressRange requires.
struct GpuDmaBuf {
  int fd = -1;
  std::uintptr_t begin = 0;
  std::size_t bytes = 0;
};

// Exports [p, p + bytes) of `cuda_device`'s memory as a dma-buf. Throws Error(precondition) with
// gpudirect_unavailable_reason(true, ...) when that cannot be done, Error(runtime) naming
// `transport` ("ib", "ofi") when a driver call fails.
GpuDmaBuf export_gpu_dmabuf(void* p, std::size_t bytes, int cuda_device, const char* transport);

// Makes the RDMA writes the NIC has completed into `cuda_device`'s memory visible to that GPU's
// kernels (cuFlushGPUDirectRDMAWrites), as a receiver must before it tells the kernel that data
// arrived: a completion orders the writes for the CPU, not for the GPU. Callable from any thread
// (it makes the device's primary context current on it). Error(runtime) naming `transport` when
// the call fails.
void flush_gpudirect_writes(int cuda_device, const char* transport);

}  // namespace ccbench
