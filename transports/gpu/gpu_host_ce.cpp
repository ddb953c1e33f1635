#include "transports/gpu/gpu_host_ce.h"

#include <cuda_runtime.h>

#include <cstring>
#include <string>

#include <fmt/format.h>

#include "core/checks_cuda.h"
#include "core/error.h"

namespace ccbench {

namespace {

// One FIFO's copies: its own stream and an event per slot. A copy into a slot is complete when
// the event recorded after it is.
class CudaSlotCopier final : public SlotCopier {
 public:
  // `what` names the connection in messages: "from rank 1 (host -> GPU)".
  CudaSlotCopier(cudaMemcpyKind kind, std::string what) : kind_(kind), what_(std::move(what)) {
    try {
      CCB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
      for (cudaEvent_t& e : events_) CCB_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaSlotCopier() override {
    if (stream_) (void)cudaStreamSynchronize(stream_);  // no copy may outlive the memory it moves
    release();
  }
  CudaSlotCopier(const CudaSlotCopier&) = delete;
  CudaSlotCopier& operator=(const CudaSlotCopier&) = delete;

  void copy(int slot, void* dst, const void* src, std::size_t bytes) override {
    check(cudaMemcpyAsync(dst, src, bytes, kind_, stream_), "cudaMemcpyAsync");
    check(cudaEventRecord(events_[slot], stream_), "cudaEventRecord");
  }
  bool done(int slot) override {
    const cudaError_t rc = cudaEventQuery(events_[slot]);
    if (rc == cudaErrorNotReady) return false;
    check(rc, "cudaEventQuery");
    return true;
  }

 private:
  void check(cudaError_t rc, const char* call) const {
    if (rc == cudaSuccess) return;
    (void)cudaGetLastError();
    fail(ExitCode::runtime, "host (copy engine): {} of a FIFO slot {} failed ({}: {})", call, what_,
         cudaGetErrorName(rc), cudaGetErrorString(rc));
  }
  void release() {
    for (cudaEvent_t& e : events_)
      if (e) (void)cudaEventDestroy(e);
    if (stream_) (void)cudaStreamDestroy(stream_);
  }
  cudaMemcpyKind kind_;
  std::string what_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t events_[gpu::kFifoSlots] = {};
};

}  // namespace

DeviceFifos::DeviceFifos(std::size_t fifos, std::size_t slot_bytes) : fifos_(fifos), slot_(slot_bytes) {
  const std::size_t counter_bytes = fifos * 3 * kLine;
  try {
    CCB_CUDA(cudaMalloc(reinterpret_cast<void**>(&slots_), fifos * gpu::kFifoSlots * slot_bytes));
    CCB_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&counters_host_), counter_bytes, cudaHostAllocMapped));
    std::memset(counters_host_, 0, counter_bytes);
    CCB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&counters_device_), counters_host_, 0));
  } catch (...) {
    release();
    throw;
  }
}

DeviceFifos::~DeviceFifos() { release(); }

void DeviceFifos::release() {
  if (counters_host_) (void)cudaFreeHost(counters_host_);
  if (slots_) (void)cudaFree(slots_);
  counters_host_ = slots_ = nullptr;
}

FifoPointers DeviceFifos::at(int fifo, char* counters) const {
  const auto f = static_cast<std::size_t>(fifo);
  char* line = counters + f * 3 * kLine;
  return {slots_ + f * gpu::kFifoSlots * slot_, reinterpret_cast<volatile std::uint64_t*>(line),
          reinterpret_cast<volatile std::uint64_t*>(line + kLine),
          reinterpret_cast<volatile std::uint64_t*>(line + 2 * kLine)};
}

FifoPointers DeviceFifos::kernel(int fifo) const { return at(fifo, counters_device_); }
FifoPointers DeviceFifos::proxy(int fifo) const { return at(fifo, counters_host_); }

HostCeProxy::HostCeProxy(int device, std::size_t slot_bytes, const std::vector<StageEnds>& recvs,
                         const std::vector<StageEnds>& sends) {
  for (const StageEnds& e : recvs)
    recvs_.push_back(std::make_unique<FifoStage>(
        e, slot_bytes,
        std::make_unique<CudaSlotCopier>(cudaMemcpyHostToDevice, fmt::format("from rank {} (host -> GPU)", e.peer))));
  for (const StageEnds& e : sends)
    sends_.push_back(std::make_unique<FifoStage>(
        e, slot_bytes,
        std::make_unique<CudaSlotCopier>(cudaMemcpyDeviceToHost, fmt::format("to rank {} (GPU -> host)", e.peer))));
  start(device, recvs_);
  start(device, sends_);
}

HostCeProxy::~HostCeProxy() { threads_.stop(); }

void HostCeProxy::start(int device, Stages& stages) {
  if (stages.empty()) return;
  threads_.start(
      [&stages] {
        bool moved = false;
        for (auto& s : stages) moved |= s->advance();
        return moved;
      },
      [device] {
        CCB_CUDA(cudaSetDevice(device));
        // A capture on the rank's stream (CUDA graphs) must not make this thread's calls illegal.
        cudaStreamCaptureMode relaxed = cudaStreamCaptureModeRelaxed;
        CCB_CUDA(cudaThreadExchangeStreamCaptureMode(&relaxed));
      });
}

}  // namespace ccbench
