#include "transports/ib/gpu_memory.h"

#include <unistd.h>

#include "core/error.h"

namespace ccbench {

std::unique_ptr<IbMemory> register_gpu_memory(IbDevice& device, void* p, std::size_t bytes, int cuda_device) {
  // --gpudirect off is ib's to check; the export checks the driver and the GPU.
  if (!device.options().gpudirect)
    fail(ExitCode::precondition, "ib: {}", *gpudirect_unavailable_reason(false, cuda_device));
  const GpuDmaBuf buf = export_gpu_dmabuf(p, bytes, cuda_device, "ib");
  // The MR's addresses are the GPU virtual addresses, so remote writes name buffers as they are.
  auto mr = device.register_dmabuf(buf.fd, 0, buf.bytes, buf.begin, true);
  close(buf.fd);  // the MR holds its own reference to the dma-buf
  return mr;
}

}  // namespace ccbench
