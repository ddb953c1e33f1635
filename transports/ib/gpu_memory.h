#pragma once
// GPU buffers for ib: registered directly with ibv_reg_dmabuf_mr over a dma-buf of the GPU range
// (transports/net/gpu_direct.h), or, with GPUDirect off or unavailable, the caller stages through
// host memory it registers itself (IbDevice::register_host). Built with ibverbs; the dma-buf path
// needs CUDA in the build.
#include <cstddef>
#include <memory>

#include "transports/ib/verbs.h"
#include "transports/net/gpu_direct.h"

namespace ccbench {

// Registers [p, p + bytes) of GPU memory for remote writes: the range is widened to whole host
// pages, exported as a dma-buf and registered with ibv_reg_dmabuf_mr. Throws Error(precondition)
// with gpudirect_unavailable_reason() when that cannot be done (the caller then stages through
// host memory), Error(runtime) when a call fails.
std::unique_ptr<IbMemory> register_gpu_memory(IbDevice& device, void* p, std::size_t bytes, int cuda_device);

}  // namespace ccbench
