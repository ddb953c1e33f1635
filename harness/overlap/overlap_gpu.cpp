// One GPU rank's --overlap load (harness/overlap/overlap.h): its stream, buffers and launches, and the
// feeder thread that keeps kAheadMs of launches queued ahead of the GPU, in spans between the
// events of a fixed ring, counting each span into the window as it retires.
#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "core/checks_cuda.h"
#include "core/cuda_stream.h"
#include "harness/overlap/cublas_library.h"
#include "harness/overlap/overlap.h"
#include "harness/overlap/overlap_kernels.h"

namespace ccbench {

namespace {

// One launch's time: launches doubled until together they take this long (a small GEMM's time
// alone is mostly its launch, which back-to-back launches hide).
constexpr double kProbeMs = 2.0;
constexpr int kMaxProbeLaunches = 1 << 16;

struct Span {
  cudaEvent_t begin = nullptr, end = nullptr;
};

// A window mark's progress, so that the feeder never takes a mark being recorded for one not
// recorded yet (whose time is later than anything complete now).
enum MarkState : int { unmarked = 0, marking = 1, marked = 2 };

class GpuLoad final : public OverlapLoad {
 public:
  GpuLoad(const OverlapSpec& spec, int device) : spec_(spec), device_(device) {
    try {
      open();
    } catch (...) {
      release();
      throw;
    }
  }
  ~GpuLoad() override {
    halt();
    release();
  }
  GpuLoad(const GpuLoad&) = delete;
  GpuLoad& operator=(const GpuLoad&) = delete;

  void start() override {
    halt();
    CCB_CUDA(cudaSetDevice(device_));
    issued_ = 0;
    retired_ = 0;
    launches_ = 0;
    for (auto& s : state_) s = unmarked;
    at_ = {};
    work_ = WindowWork{};
    failure_ = nullptr;
    failed_ = false;
    stopping_ = false;
    CCB_CUDA(cudaEventRecord(origin_, stream_));
    feeder_ = std::thread([this] { feed(); });
    while (issued_.load() == 0 && !failed_.load()) std::this_thread::yield();
    check_feeder();
    CCB_CUDA(cudaEventSynchronize(ring_[0].begin));  // the load runs
  }

  void window_begin(void* stream) override { mark(0, stream); }
  void window_end(void* stream) override { mark(1, stream); }

  double stop() override {
    halt();
    check_feeder();
    CCB_CUDA(cudaStreamSynchronize(stream_));
    for (int j = 0; j < 2; ++j)
      if (state_[j] == marked) CCB_CUDA(cudaEventSynchronize(window_[j]));
    while (retired_ < issued_) retire_oldest();
    resolve_marks();
    return work_.rate(at_);
  }

  std::uint64_t launches() const override { return launches_.load(); }
  int sms() const override { return sms_; }

 private:
  void open() {
    CCB_CUDA(cudaSetDevice(device_));
    CCB_CUDA(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_));
    if (spec_.room_sms >= sms_)
      fail(ExitCode::usage, "--overlap-room {}: GPU {} has {} SMs, which would leave the load none (valid: 0 to {})",
           spec_.room_sms, device_, sms_, sms_ - 1);
    stream_ = create_stream(StreamPriority::lowest);
    CCB_CUDA(cudaStreamCreateWithFlags(&idle_, cudaStreamNonBlocking));
    CCB_CUDA(cudaEventCreate(&origin_));
    for (cudaEvent_t& e : window_) CCB_CUDA(cudaEventCreate(&e));
    for (Span& s : ring_) {
      CCB_CUDA(cudaEventCreate(&s.begin));
      CCB_CUDA(cudaEventCreate(&s.end));
    }
    if (spec_.kind == LoadKind::gemm) open_gemm();
    else open_membw();
    plan_ = feed_plan(probe());
  }

  void release() {
    cudaSetDevice(device_);
    if (stream_) cudaStreamSynchronize(stream_);
    if (handle_) cublas_->Destroy(handle_);
    for (void* p : buffers_) cudaFree(p);
    for (const Span& s : ring_) {
      if (s.begin) cudaEventDestroy(s.begin);
      if (s.end) cudaEventDestroy(s.end);
    }
    for (cudaEvent_t e : window_)
      if (e) cudaEventDestroy(e);
    if (origin_) cudaEventDestroy(origin_);
    if (idle_) cudaStreamDestroy(idle_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  void open_gemm() {
    std::string why;
    cublas_ = cublas_api(&why);
    if (!cublas_) fail(ExitCode::precondition, "--overlap gemm needs cuBLAS, which could not be loaded: {}", why);
    const std::size_t n = spec_.size, bytes = n * n * 2;  // bf16
    for (int i = 0; i < 3; ++i) buffers_.push_back(allocate(bytes));
    for (std::uint32_t salt : {1u, 2u})
      CCB_CUDA(static_cast<cudaError_t>(overlap::fill_bf16(buffers_[salt - 1], n * n, salt, stream_)));
    CCB_CUBLAS(cublas_->Create(&handle_));
    CCB_CUBLAS(cublas_->SetStream(handle_, stream_));
    if (spec_.room_sms > 0) CCB_CUBLAS(cublas_->SetSmCountTarget(handle_, sms_ - spec_.room_sms));
  }

  void open_membw() {
    buffers_.push_back(allocate(spec_.size));
    buffers_.push_back(allocate(spec_.size));
    CCB_CUDA(static_cast<cudaError_t>(overlap::fill_bf16(buffers_[0], spec_.size / 2, 3u, stream_)));
    CCB_CUDA(static_cast<cudaError_t>(overlap::copy_block_smem(&copy_smem_)));
  }

  void* allocate(std::size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();
      fail(ExitCode::precondition, "--overlap {}: cannot allocate {} bytes on GPU {} (choose a smaller size)",
           load_label(spec_), bytes, device_);
    }
    return p;
  }

  // One launch of the load on its stream, on every SM but the room's.
  void launch() {
    if (spec_.kind == LoadKind::gemm) {
      const int n = static_cast<int>(spec_.size);
      const float alpha = 1.0f, beta = 0.0f;
      CCB_CUBLAS(cublas_->GemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, buffers_[0], CUDA_R_16BF, n,
                                 buffers_[1], CUDA_R_16BF, n, &beta, buffers_[2], CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT));
    } else {
      CCB_CUDA(static_cast<cudaError_t>(
          overlap::launch_copy(buffers_[0], buffers_[1], spec_.size, sms_ - spec_.room_sms, copy_smem_, stream_)));
    }
  }

  // One launch's time alone (ms), after one launch of warm-up (cuBLAS picks its kernel, clocks rise).
  double probe() {
    const Span& t = ring_[0];
    launch();
    for (int n = 1;; n *= 2) {
      CCB_CUDA(cudaEventRecord(t.begin, stream_));
      for (int i = 0; i < n; ++i) launch();
      CCB_CUDA(cudaEventRecord(t.end, stream_));
      CCB_CUDA(cudaEventSynchronize(t.end));
      const double ms = elapsed(t.begin, t.end);
      if (ms >= kProbeMs || n >= kMaxProbeLaunches) return ms / n;
    }
  }

  // The feeder: spans of launches, each between the events of its ring slot, never more than
  // spans_ahead queued; each retired (counted) before its slot is used again.
  void feed() {
    try {
      CCB_CUDA(cudaSetDevice(device_));
      for (std::uint64_t i = 0; !stopping_.load(); ++i) {
        const Span& s = ring_[i % kRingSpans];
        CCB_CUDA(cudaEventRecord(s.begin, stream_));
        for (int k = 0; k < plan_.launches_per_span; ++k) launch();
        CCB_CUDA(cudaEventRecord(s.end, stream_));
        launches_ += static_cast<std::uint64_t>(plan_.launches_per_span);
        issued_ = i + 1;
        while (issued_ - retired_ >= static_cast<std::uint64_t>(plan_.spans_ahead)) retire_oldest();
      }
    } catch (...) {
      failure_ = std::current_exception();
      failed_ = true;
    }
  }

  // Waits for the oldest span in flight and counts it into the window.
  void retire_oldest() {
    const Span& s = ring_[retired_ % kRingSpans];
    CCB_CUDA(cudaEventSynchronize(s.end));
    resolve_marks();  // after the span ended: a mark still unknown lies after it
    work_.add(elapsed(origin_, s.begin), elapsed(origin_, s.end), plan_.launches_per_span * load_work(spec_), at_);
    ++retired_;
  }

  // The marks' times, for those recorded and complete.
  void resolve_marks() {
    for (int j = 0; j < 2; ++j) {
      if (at_[j]) continue;
      int state = state_[j].load();
      while (state == marking) {
        std::this_thread::yield();
        state = state_[j].load();
      }
      if (state != marked) continue;
      const cudaError_t q = cudaEventQuery(window_[j]);
      if (q == cudaSuccess) at_[j] = elapsed(origin_, window_[j]);
      else if (q != cudaErrorNotReady) CCB_CUDA(q);
    }
  }

  void mark(int j, void* stream) {
    state_[j] = marking;
    const cudaError_t rc = cudaEventRecord(window_[j], stream ? static_cast<cudaStream_t>(stream) : idle_);
    state_[j] = rc == cudaSuccess ? marked : unmarked;
    CCB_CUDA(rc);
  }

  double elapsed(cudaEvent_t from, cudaEvent_t to) const {
    float ms = 0;
    CCB_CUDA(cudaEventElapsedTime(&ms, from, to));
    return static_cast<double>(ms);
  }

  void halt() {
    stopping_ = true;
    if (feeder_.joinable()) feeder_.join();
  }

  void check_feeder() {
    if (failed_.exchange(false) && failure_) std::rethrow_exception(failure_);
  }

  OverlapSpec spec_;
  int device_;
  int sms_ = 0;
  FeedPlan plan_;
  cudaStream_t stream_ = nullptr;  // the load's, at the lowest priority
  cudaStream_t idle_ = nullptr;    // nothing runs on it: the marks of the window alone
  const CublasApi* cublas_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  std::vector<void*> buffers_;    // gemm: A, B, C; membw: source, destination
  std::size_t copy_smem_ = 0;     // membw: shared memory a block reserves (one block per SM)
  cudaEvent_t origin_ = nullptr;  // on the load's stream before the first span: times are from it
  std::array<Span, kRingSpans> ring_{};
  std::array<cudaEvent_t, 2> window_{};      // the window's begin and end
  std::array<std::atomic<int>, 2> state_{};  // MarkState of each window mark since start()
  // The feeder's while it runs, the calling thread's after halt().
  std::uint64_t retired_ = 0;
  std::array<std::optional<double>, 2> at_{};  // the marks' times once known (ms from origin_)
  WindowWork work_;
  std::thread feeder_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> issued_{0}, launches_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr failure_;
};

}  // namespace

std::unique_ptr<OverlapLoad> make_gpu_load(const OverlapSpec& spec, int cuda_device) {
  if (spec.kind == LoadKind::none) fail(ExitCode::usage, "make_gpu_load: no load given");
  return std::make_unique<GpuLoad>(spec, cuda_device);
}

}  // namespace ccbench
