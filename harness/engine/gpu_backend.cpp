#include <fmt/format.h>

#include "harness/engine/backend.h"
#include "core/build_config.h"
#include "core/error.h"
#include "results/record.h"

#if CCBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include "core/checks_cuda.h"
#include "core/cuda_stream.h"
#include "collectives/verifiable.h"
#include "harness/engine/gpu_check.h"
#endif

namespace ccbench {

#if CCBENCH_HAVE_CUDA

namespace {

class GpuBackend final : public Backend {
 public:
  explicit GpuBackend(int dev) : dev_(dev) {
    CCB_CUDA(cudaSetDevice(dev));
    stream_ = create_stream(StreamPriority::highest);  // the collectives': ahead of an --overlap load
    for (auto& e : events_) CCB_CUDA(cudaEventCreate(&e));
    CCB_CUDA(cudaMalloc(&result_, 2 * sizeof(unsigned long long)));
    CCB_CUDA(cudaMallocHost(&host_result_, 2 * sizeof(unsigned long long)));
  }
  ~GpuBackend() override {
    drop_capture();
    cudaFreeHost(host_result_);
    cudaFree(result_);
    for (auto& e : events_) cudaEventDestroy(e);
    cudaStreamDestroy(stream_);
  }

  Device device() const override { return Device::gpu; }
  void* stream() { return stream_; }

  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    cudaError_t rc = cudaMalloc(&p, bytes ? bytes : 1);
    if (rc == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      fail(ExitCode::precondition, "out of GPU memory allocating {} bytes on GPU {}", bytes, dev_);
    }
    CCB_CUDA(rc);
    return p;
  }
  void release(void* p) override { cudaFree(p); }

  void fill_input(const PatternSpec& s, void* dst, std::size_t n, std::uint64_t base) override {
    CCB_CUDA(static_cast<cudaError_t>(gpu_check::fill_input(s, dst, n, base, stream_)));
  }
  void fill_expected(const PatternSpec& s, void* dst, std::size_t n) override {
    CCB_CUDA(static_cast<cudaError_t>(gpu_check::fill_expected(s, dst, n, stream_)));
  }
  void fill_bytes(void* dst, std::size_t bytes, std::uint8_t value) override {
    CCB_CUDA(cudaMemsetAsync(dst, value, bytes, stream_));
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    CCB_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
  }
  void complement(void* dst, const void* src, std::size_t bytes) override {
    CCB_CUDA(static_cast<cudaError_t>(gpu_check::complement(dst, src, bytes, stream_)));
  }
  std::uint64_t count_bytes_not(const void* p, std::size_t bytes, std::uint8_t value) override {
    reset_result();
    CCB_CUDA(static_cast<cudaError_t>(gpu_check::count_bytes_not(p, bytes, value, result_, stream_)));
    return read_result().wrong;
  }
  Mismatches compare(const PatternSpec& s, const void* expected, const void* actual, std::size_t n) override {
    reset_result();
    CCB_CUDA(static_cast<cudaError_t>(gpu_check::compare(s, expected, actual, n, result_, stream_)));
    Mismatches m = read_result();
    if (m.wrong) describe(s.dtype, m, expected, actual);
    return m;
  }
  Mismatches check_input(const PatternSpec& s, const void* buf, std::size_t n, std::uint64_t base) override {
    reset_result();
    CCB_CUDA(static_cast<cudaError_t>(gpu_check::check_input(s, buf, n, base, result_, stream_)));
    Mismatches m = read_result();
    if (m.wrong) {
      dispatch_type(s.dtype, [&](auto t) {
        using T = decltype(t);
        T a{};
        CCB_CUDA(cudaMemcpy(&a, static_cast<const T*>(buf) + m.first_index, sizeof(T), cudaMemcpyDeviceToHost));
        m.expected = format_element(
            collective_input<T>(s.coll, s.op, s.seed, s.rank, base + m.first_index, s.nranks, s.pattern));
        m.actual = format_element(a);
      });
    }
    return m;
  }
  void synchronize() override { CCB_CUDA(cudaStreamSynchronize(stream_)); }
  void delay(int ms) override {
    CCB_CUDA(static_cast<cudaError_t>(gpu_check::spin(static_cast<unsigned long long>(ms) * 1000000ull, stream_)));
  }
  void head_start(double us) override {
    CCB_CUDA(static_cast<cudaError_t>(gpu_check::spin(static_cast<unsigned long long>(us * 1000.0), stream_)));
  }
  void mark(int i) override { CCB_CUDA(cudaEventRecord(events_[i], stream_)); }
  double elapsed_us(int a, int b) override {
    float ms = 0;
    CCB_CUDA(cudaEventElapsedTime(&ms, events_[a], events_[b]));
    return ms * 1000.0;
  }
  void begin_capture() override {
    drop_capture();
    CCB_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  }
  void end_capture() override {
    cudaGraph_t graph = nullptr;
    CCB_CUDA(cudaStreamEndCapture(stream_, &graph));
    graph_ = graph;
    CCB_CUDA(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  void replay() override { CCB_CUDA(cudaGraphLaunch(exec_, stream_)); }
  void drop_capture() override {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream_, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
      cudaGraph_t g = nullptr;
      cudaStreamEndCapture(stream_, &g);  // an aborted capture: discard it
      if (g) cudaGraphDestroy(g);
      cudaGetLastError();
    }
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
  }
  std::uint64_t available_memory() const override {
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) return 0;
    return free;
  }
  std::string description() const override {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, dev_) != cudaSuccess) return fmt::format("GPU {}", dev_);
    return fmt::format("GPU {}: {} ({:04x}:{:02x}:{:02x}.0, {:.0f} GB, {} SMs)", dev_, p.name, p.pciDomainID,
                       p.pciBusID, p.pciDeviceID, p.totalGlobalMem / 1e9, p.multiProcessorCount);
  }

 private:
  void reset_result() {
    static const unsigned long long init[2] = {0, ~0ull};
    CCB_CUDA(cudaMemcpyAsync(result_, init, sizeof init, cudaMemcpyHostToDevice, stream_));
  }
  Mismatches read_result() {
    CCB_CUDA(cudaMemcpyAsync(host_result_, result_, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream_));
    synchronize();
    Mismatches m;
    m.wrong = host_result_[0];
    m.first_index = host_result_[0] ? host_result_[1] : 0;
    return m;
  }
  void describe(DataType t, Mismatches& m, const void* expected, const void* actual) {
    dispatch_type(t, [&](auto v) {
      using T = decltype(v);
      T e{}, a{};
      CCB_CUDA(cudaMemcpy(&e, static_cast<const T*>(expected) + m.first_index, sizeof(T), cudaMemcpyDeviceToHost));
      CCB_CUDA(cudaMemcpy(&a, static_cast<const T*>(actual) + m.first_index, sizeof(T), cudaMemcpyDeviceToHost));
      m.expected = format_element(e);
      m.actual = format_element(a);
    });
  }

  int dev_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t events_[kMaxMarks] = {};
  unsigned long long* result_ = nullptr;
  unsigned long long* host_result_ = nullptr;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> make_gpu_backend(int cuda_device) { return std::make_unique<GpuBackend>(cuda_device); }

int gpu_count(std::string* why) {
  int n = 0;
  cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    int driver = 0;  // 0: no libcuda.so (no NVIDIA driver), which CUDA calls an insufficient driver
    const bool no_driver =
        rc == cudaErrorNoDevice ? false : cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0;
    if (why)
      *why = no_driver ? fmt::format(
                             "no NVIDIA driver is loaded (CUDA: {}); install the driver, or measure CPU ranks "
                             "(--device cpu)",
                             cudaGetErrorName(rc))
                       : fmt::format("{} ({})", cudaGetErrorName(rc), cudaGetErrorString(rc));
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device present";
  return n;
}

void* backend_stream(Backend& b) {
  auto* g = dynamic_cast<GpuBackend*>(&b);
  return g ? g->stream() : nullptr;
}

Json gpu_runtime_versions() {
  Json v = Json::object();
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  v["cuda_runtime"] = fmt::format("{}.{}", rt / 1000, (rt % 1000) / 10);
  v["cuda_driver_api"] = drv ? fmt::format("{}.{}", drv / 1000, (drv % 1000) / 10) : "none (no driver)";
  return v;
}

#else  // no CUDA in this build

std::unique_ptr<Backend> make_gpu_backend(int) {
  fail(ExitCode::precondition, "this ccbench was built without CUDA: GPU ranks are not available");
}
int gpu_count(std::string* why) {
  if (why) *why = "this ccbench was built without CUDA";
  return 0;
}
void* backend_stream(Backend&) { return nullptr; }
Json gpu_runtime_versions() { return Json::object(); }

#endif

}  // namespace ccbench
