// One GPU rank's --overlap load (harness/overlap.h): its stream, buffers and launches, and the
// feeder thread that keeps kQueueDepth launches queued so the GPU never waits for the host.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "core/checks_cuda.h"
#include "harness/cublas_library.h"
#include "harness/overlap.h"
#include "harness/overlap_kernels.h"

namespace ccbench {

namespace {

// Launches queued ahead of the GPU: a GEMM of N = 8192 takes ~1.3 ms on an H200, so the feeder
// has milliseconds to queue the next; fewer would risk gaps, more only delays stop().
constexpr std::size_t kQueueDepth = 4;
// The alone measurement: long enough for clocks to settle under the load, short at start-up.
constexpr std::chrono::milliseconds kAloneWindow{500};

struct Launch {
  cudaEvent_t begin = nullptr, end = nullptr;
};

class GpuLoad final : public OverlapLoad {
 public:
  GpuLoad(const OverlapSpec& spec, int device) : spec_(spec), device_(device) {
    CCB_CUDA(cudaSetDevice(device));
    CCB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CCB_CUDA(cudaEventCreate(&window_[0]));
    CCB_CUDA(cudaEventCreate(&window_[1]));
    int sms = 0;
    CCB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    blocks_ = 4 * sms;
    if (spec_.kind == LoadKind::gemm) open_gemm();
    else open_membw();
    CCB_CUDA(cudaStreamSynchronize(stream_));
  }

  ~GpuLoad() override {
    halt();
    cudaSetDevice(device_);
    cudaStreamSynchronize(stream_);
    if (handle_) cublas_->Destroy(handle_);
    for (void* p : buffers_) cudaFree(p);
    for (const Launch& l : pool_) cudaEventDestroy(l.begin), cudaEventDestroy(l.end);
    cudaEventDestroy(window_[0]);
    cudaEventDestroy(window_[1]);
    cudaStreamDestroy(stream_);
  }

  double measure_alone() override {
    CCB_CUDA(cudaSetDevice(device_));
    Launch& t = event_pair(0);
    launch();  // warm-up: cuBLAS picks its kernel, the clocks rise
    launch();
    CCB_CUDA(cudaEventRecord(t.begin, stream_));
    for (std::size_t i = 0; i < kQueueDepth; ++i) launch();
    CCB_CUDA(cudaEventRecord(t.end, stream_));
    CCB_CUDA(cudaEventSynchronize(t.end));
    float ms = 0;
    CCB_CUDA(cudaEventElapsedTime(&ms, t.begin, t.end));
    const std::size_t n = std::max<std::size_t>(kQueueDepth, static_cast<std::size_t>(kAloneWindow.count() * kQueueDepth / std::max(ms, 1e-3f)));
    CCB_CUDA(cudaEventRecord(t.begin, stream_));
    for (std::size_t i = 0; i < n; ++i) launch();
    CCB_CUDA(cudaEventRecord(t.end, stream_));
    CCB_CUDA(cudaEventSynchronize(t.end));
    CCB_CUDA(cudaEventElapsedTime(&ms, t.begin, t.end));
    return static_cast<double>(n) * load_work(spec_) / (ms / 1000.0);
  }

  void start() override {
    halt();
    launched_ = 0;
    marked_ = 0;
    failure_ = nullptr;
    stopping_ = false;
    const cudaEvent_t first = event_pair(0).begin;  // read now: the feeder may grow pool_ from here on
    feeder_ = std::thread([this] { feed(); });
    while (launched_.load() == 0 && !failure_ready_.load()) std::this_thread::yield();
    check_feeder();
    CCB_CUDA(cudaEventSynchronize(first));  // the load runs
  }

  void window_begin(void* stream) override { mark(0, stream); }
  void window_end(void* stream) override { mark(1, stream); }

  double stop() override {
    halt();
    check_feeder();
    CCB_CUDA(cudaStreamSynchronize(stream_));
    if (marked_ != 3 || launched_ == 0) return 0;
    auto at = [&](cudaEvent_t e) {
      float ms = 0;
      CCB_CUDA(cudaEventElapsedTime(&ms, pool_[0].begin, e));
      return static_cast<double>(ms);
    };
    std::vector<LaunchSpan> spans;
    for (std::size_t i = 0; i < launched_; ++i) spans.push_back({at(pool_[i].begin), at(pool_[i].end)});
    return rate_in_window(spans, load_work(spec_), at(window_[0]), at(window_[1]));
  }

 private:
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
  }

  void open_membw() {
    buffers_.push_back(allocate(spec_.size));
    buffers_.push_back(allocate(spec_.size));
    CCB_CUDA(cudaMemsetAsync(buffers_[0], 0x5a, spec_.size, stream_));
  }

  void* allocate(std::size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess)
      fail(ExitCode::precondition, "--overlap {}: cannot allocate {} bytes on GPU {} (choose a smaller size)",
           load_label(spec_), bytes, device_);
    return p;
  }

  // One launch of the load on its stream.
  void launch() {
    if (spec_.kind == LoadKind::gemm) {
      const int n = static_cast<int>(spec_.size);
      const float alpha = 1.0f, beta = 0.0f;
      CCB_CUBLAS(cublas_->GemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, buffers_[0], CUDA_R_16BF, n,
                                 buffers_[1], CUDA_R_16BF, n, &beta, buffers_[2], CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT));
    } else {
      CCB_CUDA(static_cast<cudaError_t>(overlap::launch_copy(buffers_[0], buffers_[1], spec_.size, blocks_, stream_)));
    }
  }

  // The events of launch `i`, created on first use (the main thread before feeding, or the feeder).
  Launch& event_pair(std::size_t i) {
    std::lock_guard lock(pool_mu_);
    while (pool_.size() <= i) {
      Launch l;
      CCB_CUDA(cudaEventCreate(&l.begin));
      CCB_CUDA(cudaEventCreate(&l.end));
      pool_.push_back(l);
    }
    return pool_[i];
  }

  // The feeder: launches, each between its two events, never more than kQueueDepth ahead.
  void feed() {
    try {
      CCB_CUDA(cudaSetDevice(device_));
      for (std::size_t i = 0; !stopping_.load(); ++i) {
        const Launch l = event_pair(i);
        CCB_CUDA(cudaEventRecord(l.begin, stream_));
        launch();
        CCB_CUDA(cudaEventRecord(l.end, stream_));
        launched_ = i + 1;
        if (i >= kQueueDepth) CCB_CUDA(cudaEventSynchronize(event_pair(i - kQueueDepth).end));
      }
    } catch (...) {
      failure_ = std::current_exception();
      failure_ready_ = true;
    }
  }

  void mark(int which, void* stream) {
    CCB_CUDA(cudaEventRecord(window_[which], static_cast<cudaStream_t>(stream)));
    marked_ |= 1 << which;
  }

  void halt() {
    stopping_ = true;
    if (feeder_.joinable()) feeder_.join();
  }

  void check_feeder() {
    if (failure_ready_.exchange(false) && failure_) std::rethrow_exception(failure_);
  }

  OverlapSpec spec_;
  int device_;
  int blocks_ = 0;
  cudaStream_t stream_ = nullptr;
  const CublasApi* cublas_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  std::vector<void*> buffers_;  // gemm: A, B, C; membw: source, destination
  std::mutex pool_mu_;
  std::vector<Launch> pool_;    // launch i's events; kept between rows
  cudaEvent_t window_[2] = {};  // the window's begin and end, on the collectives' stream
  int marked_ = 0;              // bits: window_begin, window_end since start()
  std::thread feeder_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> launched_{0};
  std::atomic<bool> failure_ready_{false};
  std::exception_ptr failure_;
};

}  // namespace

std::unique_ptr<OverlapLoad> make_gpu_load(const OverlapSpec& spec, int cuda_device) {
  if (spec.kind == LoadKind::none) fail(ExitCode::usage, "make_gpu_load: no load given");
  return std::make_unique<GpuLoad>(spec, cuda_device);
}

}  // namespace ccbench
