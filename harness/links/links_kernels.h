#pragma once
// Launchers of the `ccbench links` kernels (links_kernels.cu). Each enqueues on `stream` (a
// cudaStream_t) and returns the launch's cudaError_t as an int.
#include <cstddef>
#include <cstdint>

namespace ccbench::links_kernels {

// dst[0, bytes) = src[0, bytes) with SM loads and stores; dst may be a peer GPU's memory (IPC).
// 16-byte vectors where both pointers are 16-byte aligned, bytes for the tail.
int sm_copy(void* dst, const void* src, std::size_t bytes, void* stream);

// A ping-pong of `rounds` rounds over two flags: the initiator writes round r into the peer's
// `peer_flag` and waits for r in its own `my_flag`; the other side waits, then answers. Each wait
// gives up after `spin_limit` polls and stores 1 into *timed_out (device-visible memory) so that a
// peer that never starts cannot hang the GPU.
int ping_pong(volatile std::uint32_t* my_flag, volatile std::uint32_t* peer_flag, int rounds, bool initiator,
              unsigned long long spin_limit, int* timed_out, void* stream);

}  // namespace ccbench::links_kernels
