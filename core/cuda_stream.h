#pragma once
// CUDA streams by scheduling priority. The collectives' streams take the device's highest
// priority and the --overlap load's its lowest (harness/overlap/overlap.h), so that when blocks of both
// wait for an SM the collective's go first. Priority orders waiting blocks only: a block already
// running is never preempted, which is why the load also leaves SMs free. Only targets built
// with CUDA include this header.
#include <cuda_runtime.h>

#include "core/checks_cuda.h"

namespace ccbench {

enum class StreamPriority { highest, lowest };

// A non-blocking stream of the current device at `p`.
inline cudaStream_t create_stream(StreamPriority p) {
  int least = 0, greatest = 0;  // numerically: a lower number is a higher priority
  CCB_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s = nullptr;
  CCB_CUDA(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, p == StreamPriority::highest ? greatest : least));
  return s;
}

}  // namespace ccbench
