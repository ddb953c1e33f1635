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

void flush_gpudirect_writes(int) {
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
  // A receiver makes the NIC's writes visible to the kernels with cuFlushGPUDirectRDMAWrites
  // (flush_gpudirect_writes), so the GPU must support it from the host.
  int rdma = 0, flush = 0;
  if (cuDeviceGetAttribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, dev) != CUDA_SUCCESS || !rdma ||
      cuDeviceGetAttribute(&flush, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, dev) != CUDA_SUCCESS ||
      !(flush & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST))
    return fmt::format("GPU {} does not support GPUDirect RDMA with host-side flushes (GPU_DIRECT_RDMA_SUPPORTED = "
                       "{}, GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = {}): GPU buffers are staged through host memory",
                       cuda_device, rdma, flush);
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

namespace {

[[noreturn]] void fail_cuda(CUresult rc, const char* call, int cuda_device) {
  const char* text = nullptr;
  cuGetErrorString(rc, &text);
  fail(ExitCode::runtime, "ib: {} for GPU {} failed: {}", call, cuda_device, text ? text : "unknown error");
}

}  // namespace

void flush_gpudirect_writes(int cuda_device) {
  thread_local int current = -1;  // the device whose primary context this thread has made current
  if (current != cuda_device) {
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    if (CUresult rc = cuDeviceGet(&dev, cuda_device); rc != CUDA_SUCCESS) fail_cuda(rc, "cuDeviceGet", cuda_device);
    if (CUresult rc = cuDevicePrimaryCtxRetain(&ctx, dev); rc != CUDA_SUCCESS)
      fail_cuda(rc, "cuDevicePrimaryCtxRetain", cuda_device);
    if (CUresult rc = cuCtxSetCurrent(ctx); rc != CUDA_SUCCESS) fail_cuda(rc, "cuCtxSetCurrent", cuda_device);
    current = cuda_device;
  }
  const CUresult rc = cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                                 CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
  if (rc != CUDA_SUCCESS) fail_cuda(rc, "cuFlushGPUDirectRDMAWrites", cuda_device);
}

#endif

}  // namespace ccbench
