#include "transports/net/gpu_direct.h"

#include <unistd.h>

#include <fmt/format.h>

#include "core/build_config.h"
#include "core/error.h"
#if CCBENCH_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>
#include "core/checks_cuda.h"
#endif

namespace ccbench {

#if !CCBENCH_HAVE_CUDA

std::optional<std::string> gpudirect_unavailable_reason(bool, int) {
  return std::string("this ccbench was built without CUDA: GPU buffers are staged through host memory");
}

GpuDmaBuf export_gpu_dmabuf(void*, std::size_t, int, const char* transport) {
  fail(ExitCode::precondition, "{}: {}", transport, *gpudirect_unavailable_reason(true, 0));
}

void flush_gpudirect_writes(int, const char* transport) {
  fail(ExitCode::precondition, "{}: {}", transport, *gpudirect_unavailable_reason(true, 0));
}

#else

namespace {

// The driver API calls used here, looked up through the runtime's driver entry points: no
// link-time dependency on libcuda, so the binary still starts where no GPU driver is installed.
struct DriverCalls {
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*dmabuf_handle)(void*, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long) = nullptr;
  CUresult (*error_string)(CUresult, const char**) = nullptr;
  CUresult (*primary_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*set_current)(CUcontext) = nullptr;
  CUresult (*flush)(CUflushGPUDirectRDMAWritesTarget, CUflushGPUDirectRDMAWritesScope) = nullptr;
  bool complete() const {
    return device_get && attribute && dmabuf_handle && error_string && primary_retain && set_current && flush;
  }
};

template <typename F>
void look_up(F& f, const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion(name, &p, kDriverApiVersion, cudaEnableDefault, &status) == cudaSuccess &&
      status == cudaDriverEntryPointSuccess)
    f = reinterpret_cast<F>(p);
}

const DriverCalls& driver() {
  static const DriverCalls calls = [] {
    DriverCalls c;
    look_up(c.device_get, "cuDeviceGet");
    look_up(c.attribute, "cuDeviceGetAttribute");
    look_up(c.dmabuf_handle, "cuMemGetHandleForAddressRange");
    look_up(c.error_string, "cuGetErrorString");
    look_up(c.primary_retain, "cuDevicePrimaryCtxRetain");
    look_up(c.set_current, "cuCtxSetCurrent");
    look_up(c.flush, "cuFlushGPUDirectRDMAWrites");
    return c;
  }();
  return calls;
}

[[noreturn]] void fail_cuda(CUresult rc, const char* call, int cuda_device, const char* transport) {
  const char* text = nullptr;
  driver().error_string(rc, &text);
  fail(ExitCode::runtime, "{}: {} for GPU {} failed: {}", transport, call, cuda_device, text ? text : "unknown error");
}

}  // namespace

std::optional<std::string> gpudirect_unavailable_reason(bool allowed, int cuda_device) {
  if (!allowed) return std::string("--gpudirect off: GPU buffers are staged through host memory");
  const DriverCalls& cu = driver();
  if (!cu.complete())
    return std::string(
        "the CUDA driver does not offer the dma-buf and GPUDirect RDMA calls (driver entry points "
        "for CUDA 12.0): GPU buffers are staged through host memory");
  CUdevice dev = 0;
  int dmabuf = 0;
  if (cu.device_get(&dev, cuda_device) != CUDA_SUCCESS ||
      cu.attribute(&dmabuf, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev) != CUDA_SUCCESS || !dmabuf)
    return fmt::format(
        "GPU {} cannot export dma-bufs (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0; needs an open "
        "kernel module driver): GPU buffers are staged through host memory",
        cuda_device);
  // A receiver makes the NIC's writes visible to the kernels with cuFlushGPUDirectRDMAWrites
  // (flush_gpudirect_writes), so the GPU must support it from the host.
  int rdma = 0, flush = 0;
  if (cu.attribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, dev) != CUDA_SUCCESS || !rdma ||
      cu.attribute(&flush, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, dev) != CUDA_SUCCESS ||
      !(flush & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST))
    return fmt::format(
        "GPU {} does not support GPUDirect RDMA with host-side flushes (GPU_DIRECT_RDMA_SUPPORTED = "
        "{}, GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = {}): GPU buffers are staged through host memory",
        cuda_device, rdma, flush);
  return std::nullopt;
}

GpuDmaBuf export_gpu_dmabuf(void* p, std::size_t bytes, int cuda_device, const char* transport) {
  if (auto why = gpudirect_unavailable_reason(true, cuda_device))
    fail(ExitCode::precondition, "{}: {}", transport, *why);
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  GpuDmaBuf buf;
  buf.begin = reinterpret_cast<std::uintptr_t>(p) & ~(page - 1);
  buf.bytes = ((reinterpret_cast<std::uintptr_t>(p) + bytes + page - 1) & ~(page - 1)) - buf.begin;
  if (CUresult rc = driver().dmabuf_handle(&buf.fd, static_cast<CUdeviceptr>(buf.begin), buf.bytes,
                                           CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
      rc != CUDA_SUCCESS)
    fail_cuda(rc, "cuMemGetHandleForAddressRange", cuda_device, transport);
  return buf;
}

void flush_gpudirect_writes(int cuda_device, const char* transport) {
  const DriverCalls& cu = driver();  // complete: gpudirect_unavailable_reason() said so before slots were registered
  thread_local int current = -1;     // the device whose primary context this thread has made current
  if (current != cuda_device) {
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    if (CUresult rc = cu.device_get(&dev, cuda_device); rc != CUDA_SUCCESS)
      fail_cuda(rc, "cuDeviceGet", cuda_device, transport);
    if (CUresult rc = cu.primary_retain(&ctx, dev); rc != CUDA_SUCCESS)
      fail_cuda(rc, "cuDevicePrimaryCtxRetain", cuda_device, transport);
    if (CUresult rc = cu.set_current(ctx); rc != CUDA_SUCCESS) fail_cuda(rc, "cuCtxSetCurrent", cuda_device, transport);
    current = cuda_device;
  }
  if (CUresult rc =
          cu.flush(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX, CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
      rc != CUDA_SUCCESS)
    fail_cuda(rc, "cuFlushGPUDirectRDMAWrites", cuda_device, transport);
}

#endif

}  // namespace ccbench
