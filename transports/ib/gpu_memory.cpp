#include "transports/ib/gpu_memory.h"

#include <unistd.h>

#include <fmt/format.h>

#include "ccbench/build_info.h"
#include "core/error.h"
#if CCBENCH_BUILT_WITH_CUDA
#include <cuda.h>
#endif

namespace ccbench {

#if !CCBENCH_BUILT_WITH_CUDA

std::optional<std::string> gpudirect_unavailable_reason(const IbOptions&, int) {
  return std::string("this ccbench was built without CUDA: GPU buffers are staged through host memory");
}

std::unique_ptr<IbMemory> register_gpu_memory(IbDevice&, void*, std::size_t, int) {
  fail(ExitCode::precondition, "ib: {}", *gpudirect_unavailable_reason(IbOptions{}, 0));
}

#else

std::optional<std::string> gpudirect_unavailable_reason(const IbOptions& options, int cuda_device) {
  if (!options.gpudirect) return std::string("--gpudirect off: GPU buffers are staged through host memory");
  CUdevice dev = 0;
  int dmabuf = 0;
  if (cuDeviceGet(&dev, cuda_device) != CUDA_SUCCESS ||
      cuDeviceGetAttribute(&dmabuf, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev) != CUDA_SUCCESS || !dmabuf)
    return fmt::format("GPU {} cannot export dma-bufs (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0; needs an open "
                       "kernel module driver): GPU buffers are staged through host memory", cuda_device);
  return std::nullopt;
}

std::unique_ptr<IbMemory> register_gpu_memory(IbDevice& device, void* p, std::size_t bytes, int cuda_device) {
  if (auto why = gpudirect_unavailable_reason(device.options(), cuda_device)) fail(ExitCode::precondition, "ib: {}", *why);
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(p) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes + page - 1) & ~(page - 1);
  int fd = -1;
  const CUresult rc = cuMemGetHandleForAddressRange(&fd, static_cast<CUdeviceptr>(begin), end - begin,
                                                    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  if (rc != CUDA_SUCCESS) {
    const char* text = nullptr;
    cuGetErrorString(rc, &text);
    fail(ExitCode::runtime, "ib: cuMemGetHandleForAddressRange of {} bytes of GPU {} memory failed: {}", end - begin,
         cuda_device, text ? text : "unknown error");
  }
  // The MR's addresses are the GPU virtual addresses, so remote writes name buffers as they are.
  auto mr = device.register_dmabuf(fd, 0, end - begin, begin, true);
  close(fd);  // the MR holds its own reference to the dma-buf
  return mr;
}

#endif

}  // namespace ccbench
