#pragma once
// GPU buffers for RDMA: registered directly (GPUDirect RDMA through a dma-buf exported with
// cuMemGetHandleForAddressRange and ibv_reg_dmabuf_mr), or, with GPUDirect off or unavailable,
// the caller stages through host memory it registers itself (IbDevice::register_host).
// Built with ibverbs; the dma-buf path needs CUDA in the build.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "transports/ib/verbs.h"

namespace ccbench {

// Why GPU memory cannot be registered directly here (no CUDA in the build, a driver without
// dma-buf export, --gpudirect off), or nullopt when it can.
std::optional<std::string> gpudirect_unavailable_reason(const IbOptions& options, int cuda_device);

// Registers [p, p + bytes) of GPU memory for remote writes: the range is widened to whole host
// pages (as cuMemGetHandleForAddressRange requires), exported as a dma-buf and registered with
// ibv_reg_dmabuf_mr. Throws Error(precondition) with gpudirect_unavailable_reason() when that
// cannot be done (the caller then stages through host memory), Error(runtime) when a call fails.
std::unique_ptr<IbMemory> register_gpu_memory(IbDevice& device, void* p, std::size_t bytes, int cuda_device);

// Makes the RDMA writes the NIC has completed into `cuda_device`'s memory visible to that GPU's
// kernels (cuFlushGPUDirectRDMAWrites), as a receiver must before it tells the kernel that data
// arrived: a completion orders the writes for the CPU, not for the GPU. Callable from any thread
// (it makes the device's primary context current on it). Error(runtime) when the call fails.
void flush_gpudirect_writes(int cuda_device);

}  // namespace ccbench
