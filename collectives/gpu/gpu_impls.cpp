#include "collectives/gpu/gpu_impls.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "collectives/gpu/kernel_args.h"
#include "collectives/schedules/tree.h"
#include "results/error.h"
#include "transports/cuda_check.h"
#include "transports/cuda_ipc.h"

namespace ccbench {

namespace {

using namespace gpu;

// A size from the environment (tuning knobs), or `fallback`; a bad value is a usage error.
std::size_t env_size(const char* name, std::size_t fallback, std::size_t lo, std::size_t hi, std::size_t multiple) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  std::size_t x = 0;
  auto [end, ec] = std::from_chars(v, v + std::strlen(v), x);
  if (ec != std::errc() || *end || x < lo || x > hi || x % multiple)
    fail(ExitCode::usage, "{}='{}' is not valid: expected a whole number from {} to {} that is a multiple of {}", name, v,
         lo, hi, multiple);
  return x;
}

// Device memory holding a copy of a host array (connection tables).
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(const std::vector<T>& host) {
    CCB_CUDA(cudaMalloc(&ptr_, std::max<std::size_t>(1, host.size()) * sizeof(T)));
    if (!host.empty()) CCB_CUDA(cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DeviceArray() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceArray(DeviceArray&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    return *this;
  }
  const T* get() const { return ptr_; }

 private:
  T* ptr_ = nullptr;
};

// Zeroed device counters (steps, epochs) that persist across launches.
class DeviceCounters {
 public:
  explicit DeviceCounters(std::size_t n) {
    CCB_CUDA(cudaMalloc(&ptr_, n * sizeof(std::uint64_t)));
    CCB_CUDA(cudaMemset(ptr_, 0, n * sizeof(std::uint64_t)));
  }
  ~DeviceCounters() { cudaFree(ptr_); }
  DeviceCounters(const DeviceCounters&) = delete;
  DeviceCounters& operator=(const DeviceCounters&) = delete;
  std::uint64_t* at(std::size_t i) const { return ptr_ + i; }

 private:
  std::uint64_t* ptr_ = nullptr;
};

// The device-error record kernels write and the host reads after synchronising.
class DeviceErrors {
 public:
  DeviceErrors() {
    CCB_CUDA(cudaHostAlloc(&host_, sizeof(DeviceError), cudaHostAllocMapped));
    std::memset(host_, 0, sizeof(DeviceError));
    CCB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_), host_, 0));
  }
  ~DeviceErrors() { cudaFreeHost(host_); }
  DeviceErrors(const DeviceErrors&) = delete;
  DeviceErrors& operator=(const DeviceErrors&) = delete;
  WaitLimits limits(std::chrono::milliseconds timeout) const {
    return {dev_, static_cast<std::uint64_t>(timeout.count()) * 1000000ull};
  }
  void check(const char* impl, int rank, std::chrono::milliseconds timeout) const {
    if (*reinterpret_cast<volatile int*>(&host_->code) == 0) return;
    std::atomic_thread_fence(std::memory_order_acquire);
    DeviceError e;
    std::memcpy(&e, host_, sizeof e);
    const char* what = e.what == kWaitData ? "data" : e.what == kWaitSlot ? "a free slot" : e.what == kWaitBarrier ? "a barrier" : "a round";
    fail(ExitCode::timeout,
         "{} kernel on rank {}: block {} waited more than {:.1f} s for {} from rank {} (flag {} of {}): a peer is "
         "stuck or gone",
         impl, rank, e.block, timeout.count() / 1000.0, what, e.peer, e.seen, e.target);
  }

 private:
  DeviceError* host_ = nullptr;
  DeviceError* dev_ = nullptr;
};

// FIFO connections in CUDA IPC memory. Every rank has `fifos` incoming FIFOs (slots + tail,
// written by their sender) and `fifos` outgoing heads (written by the receivers of its sends).
// Which id a connection uses is a pure function of the schedule, the same on both sides.
class FifoMesh {
 public:
  FifoMesh(MPI_Comm comm, int fifos, std::size_t slot_bytes)
      : fifos_(static_cast<std::size_t>(fifos)),
        slot_(slot_bytes),
        region_(comm, fifos_ * (kFifoSlots * slot_bytes + 2 * kLine)),
        steps_(2 * fifos_) {}
  // Send through the peer's incoming FIFO `peer_fifo`; the peer frees slots in our head `my_out`.
  SendConn send(int peer, int peer_fifo, int my_out) const {
    char* p = static_cast<char*>(region_.of(peer));
    return {p + data(peer_fifo), reinterpret_cast<volatile std::uint64_t*>(p + tail(peer_fifo)),
            reinterpret_cast<const volatile std::uint64_t*>(local() + head(my_out)), steps_.at(2 * idx(my_out)), peer};
  }
  // Receive through our incoming FIFO `my_fifo`; we free slots in the peer's head `peer_out`.
  RecvConn recv(int peer, int my_fifo, int peer_out) const {
    char* p = static_cast<char*>(region_.of(peer));
    return {local() + data(my_fifo), reinterpret_cast<const volatile std::uint64_t*>(local() + tail(my_fifo)),
            reinterpret_cast<volatile std::uint64_t*>(p + head(peer_out)), steps_.at(2 * idx(my_fifo) + 1), peer};
  }

 private:
  static constexpr std::size_t kLine = 128;  // flags of different writers never share a line
  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }
  char* local() const { return static_cast<char*>(region_.local()); }
  std::size_t data(int f) const { return idx(f) * kFifoSlots * slot_; }
  std::size_t tail(int f) const { return fifos_ * kFifoSlots * slot_ + idx(f) * kLine; }
  std::size_t head(int f) const { return fifos_ * kFifoSlots * slot_ + fifos_ * kLine + idx(f) * kLine; }
  std::size_t fifos_, slot_;
  IpcRegion region_;
  DeviceCounters steps_;
};

// What the peer kernels address: every rank's scratch region (flags, LL buffers) and, once
// attached, every rank's send and receive buffers; the table lives in device memory.
class PeerState {
 public:
  PeerState(MPI_Comm comm, std::size_t scratch_bytes) : comm_(comm), scratch_(comm, scratch_bytes), epochs_(kMaxChannels) {
    int n = 1;
    MPI_Comm_size(comm, &n);
    for (int r = 0; r < n; ++r) table_.scratch_of[r] = static_cast<char*>(scratch_.of(r));
    upload();
  }
  // Maps the harness's buffers of every rank (collective).
  void attach(const BufferSet& b, bool send, bool recv) {
    set_ = b;
    int n = 1;
    MPI_Comm_size(comm_, &n);
    if (send) send_ = std::make_unique<IpcBufferMap>(comm_, b.send);
    if (recv) recv_ = std::make_unique<IpcBufferMap>(comm_, b.recv);
    for (int r = 0; r < n; ++r) {
      table_.send_of[r] = send_ ? send_->of(r) : nullptr;
      table_.recv_of[r] = recv_ ? recv_->of(r) : nullptr;
    }
    upload();
  }
  void detach() {
    send_.reset();
    recv_.reset();
  }
  // Kernel parameters of one call: where its buffers lie in the attached ones.
  PeerParams params(const CallArgs& a, int rank, int nranks, int blocks, const WaitLimits& limits) const {
    PeerParams p{};
    p.dtype = a.spec.dtype;
    p.op = a.spec.op;
    p.nranks = nranks;
    p.rank = rank;
    p.blocks = blocks;
    p.send = a.send;
    p.recv = a.recv;
    p.count = a.count;
    p.table = device_.get();
    p.epochs = epochs_.at(0);
    p.limits = limits;
    auto* snd = static_cast<const char*>(a.send);
    auto* rcv = static_cast<const char*>(a.recv);
    auto* sb = static_cast<const char*>(set_.send);
    auto* rb = static_cast<const char*>(set_.recv);
    if (send_ || recv_) {
      if (snd >= rb && snd <= rb + set_.recv_bytes) {
        p.send_in_recv = 1;
        p.send_offset = static_cast<std::size_t>(snd - rb);
      } else if (snd >= sb && snd <= sb + set_.send_bytes) {
        p.send_offset = static_cast<std::size_t>(snd - sb);
      } else {
        fail(ExitCode::runtime, "a buffer given to run() lies outside the attached buffers");
      }
      if (rcv < rb || rcv > rb + set_.recv_bytes) fail(ExitCode::runtime, "a receive buffer lies outside the attached one");
      p.recv_offset = static_cast<std::size_t>(rcv - rb);
    }
    return p;
  }
  // Rank r's attached receive buffer as this rank addresses it (host side).
  void* recv_of(int r) const { return table_.recv_of[r]; }

 private:
  void upload() { device_ = DeviceArray<PeerTable>(std::vector<PeerTable>{table_}); }
  MPI_Comm comm_;
  IpcRegion scratch_;
  DeviceCounters epochs_;
  PeerTable table_{};
  DeviceArray<PeerTable> device_;
  BufferSet set_;
  std::unique_ptr<IpcBufferMap> send_, recv_;
};

// What every kernel implementation shares: rank, stream, error record, one-node check.
class GpuImpl : public Implementation {
 public:
  explicit GpuImpl(const char* name) : name_(name) {}
  std::optional<std::string> unsupported(const CaseSpec& s, const ImplContext& ctx) const override {
    if (ctx.device != Device::gpu) return std::string(name_) + " runs on GPU ranks";
    if (ctx.layout && ctx.layout->nodes > 1)
      return "our GPU kernels need every rank on one node (CUDA IPC); across nodes compare with nccl";
    if (ctx.layout && ctx.layout->nranks > kMaxRanks)
      return fmt::format("our GPU kernels address at most {} ranks", kMaxRanks);
    return supports(s);
  }
  void setup(const ImplContext& ctx) override {
    ctx_ = ctx;
    MPI_Comm_rank(ctx.comm, &rank_);
    MPI_Comm_size(ctx.comm, &n_);
    stream_ = ctx.stream;
    CCB_CUDA(cudaSetDevice(ctx.cuda_device));
    errors_ = std::make_unique<DeviceErrors>();
    setup_kernels();
  }
  void check_async_errors() override {
    if (errors_) errors_->check(name_, rank_, ctx_.timeout);
  }
  std::string transport() const override { return "cuda_ipc"; }
  bool graph_capturable() const override { return true; }

 protected:
  virtual std::optional<std::string> supports(const CaseSpec& s) const = 0;
  virtual void setup_kernels() = 0;
  WaitLimits limits() const { return errors_->limits(ctx_.timeout); }
  cudaStream_t stream() const { return static_cast<cudaStream_t>(stream_); }
  void launched(int rc) const { CCB_CUDA(static_cast<cudaError_t>(rc)); }
  // One rank: the result is the input.
  void copy_alone(const CallArgs& a) const {
    const std::size_t bytes = a.count * element_size(a.spec.dtype);
    if (a.send != a.recv && bytes) CCB_CUDA(cudaMemcpyAsync(a.recv, a.send, bytes, cudaMemcpyDeviceToDevice, stream()));
  }
  const char* name_;
  ImplContext ctx_;
  int rank_ = 0, n_ = 1;
  void* stream_ = nullptr;
  std::unique_ptr<DeviceErrors> errors_;
};

// The tuning knobs, read where they are used; check_gpu_tuning_environment() reads them all.
std::size_t default_slot_bytes() {
  // 1 MiB slots: measured on 2 x H200 (NV18), 1-4 GiB all-reduce, against 256 and 512 KiB.
  return env_size("CCBENCH_GPU_SLOT_BYTES", 1 << 20, 4096, 16 << 20, 4096);
}
int ring_channels() {
  // 128 channels (capped by resident_limit): 366 GB/s busbw at 4 GiB on 2 x H200 against 347
  // with 64 and 326 with 32 (1 MiB slots; results/baselines/h200x2-2026-11-30).
  return static_cast<int>(env_size("CCBENCH_GPU_CHANNELS", 128, 1, kMaxChannels, 1));
}
int tree_channels() {
  // 32 channels per tree and role (128 blocks, capped by resident_limit): 340 GB/s at 256 MiB on
  // 2 x H200 against 303 with 16 (results/baselines/h200x2-2026-11-30).
  return static_cast<int>(env_size("CCBENCH_GPU_TREE_CHANNELS", 32, 1, 32, 1));
}
int twoshot_blocks() {
  // 128 blocks: 340 GB/s at 256 MiB on 2 x H200 against 330 with 64 and 307 with 32; more reads
  // of the peer's input in flight.
  return static_cast<int>(env_size("CCBENCH_GPU_TWOSHOT_BLOCKS", 128, 1, kMaxChannels, 1));
}
std::size_t oneshot_max_bytes() { return env_size("CCBENCH_ONESHOT_MAX_BYTES", 512 << 10, 8, 8 << 20, 8); }
std::size_t best_oneshot_max() {
  return env_size("CCBENCH_BEST_ONESHOT_MAX_BYTES", oneshot_max_bytes(), 0, oneshot_max_bytes(), 1);
}
std::size_t best_twoshot_max() {
  return env_size("CCBENCH_BEST_TWOSHOT_MAX_BYTES", std::size_t(64) << 20, 0, std::size_t(1) << 40, 1);
}
// best's all-gather, by a rank's piece: Bruck up to 2 MiB, ring up to 16 MiB, copy engines above.
// On 2 x H200 (results/baselines/h200x2-2026-11-30, 128 ring channels): Bruck 138 against ring
// 133 GB/s at 4 MiB output, ring 240 against Bruck 228 and ce 198 at 16 MiB, ring 273 against
// ce 252 at 32 MiB, ce 301 against ring 289 at 64 MiB.
std::size_t best_bruck_max() {
  return env_size("CCBENCH_BEST_BRUCK_MAX_BYTES", std::size_t(2) << 20, 0, std::size_t(1) << 40, 1);
}
std::size_t best_ring_allgather_max() {
  return env_size("CCBENCH_BEST_RING_ALLGATHER_MAX_BYTES", std::size_t(16) << 20, 0, std::size_t(1) << 40, 1);
}

// Blocks that wait on each other must all be resident at once: at most one block per SM.
int resident_limit(int device, int blocks_per_channel) {
  int sms = 0;
  CCB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::max(1, sms / blocks_per_channel);
}

int blocks_for(std::size_t bytes, std::size_t bytes_per_block, int max_blocks) {
  std::size_t b = (bytes + bytes_per_block - 1) / bytes_per_block;
  return static_cast<int>(std::clamp<std::size_t>(b, 1, static_cast<std::size_t>(max_blocks)));
}

// ---- ring ---------------------------------------------------------------------------------

class RingGpu final : public GpuImpl {
 public:
  RingGpu() : GpuImpl("ring") {}
  CollectiveSet collectives() const override {
    return {Collective::allreduce, Collective::allgather, Collective::reducescatter};
  }
  std::optional<std::string> supports(const CaseSpec& s) const override {
    if (s.coll == Collective::allreduce || s.coll == Collective::allgather || s.coll == Collective::reducescatter)
      return std::nullopt;
    return "ring on GPUs implements allreduce, allgather and reducescatter";
  }
  void setup_kernels() override {
    channels_ = std::min(ring_channels(), resident_limit(ctx_.cuda_device, 1));
    slot_ = default_slot_bytes();
    if (n_ == 1) return;
    mesh_ = std::make_unique<FifoMesh>(ctx_.comm, channels_, slot_);
    std::vector<SendConn> s;
    std::vector<RecvConn> r;
    const int next = (rank_ + 1) % n_, prev = (rank_ + n_ - 1) % n_;
    for (int c = 0; c < channels_; ++c) {
      s.push_back(mesh_->send(next, c, c));
      r.push_back(mesh_->recv(prev, c, c));
    }
    send_ = DeviceArray<SendConn>(s);
    recv_ = DeviceArray<RecvConn>(r);
  }
  void run(const CallArgs& a) override {
    if (n_ == 1) return copy_alone(a);
    RingParams p{};
    p.kind = a.spec.coll == Collective::allreduce   ? RingKind::allreduce
             : a.spec.coll == Collective::allgather ? RingKind::allgather
                                                    : RingKind::reducescatter;
    p.dtype = a.spec.dtype;
    p.op = a.spec.op;
    p.nranks = n_;
    p.pos = rank_;
    p.channels = channels_for(a);
    p.send = a.send;
    p.recv = a.recv;
    p.count = a.count;
    p.slot_bytes = slot_;
    p.send_conns = send_.get();
    p.recv_conns = recv_.get();
    p.limits = limits();
    launched(launch_ring(p, stream_));
  }
  std::string describe(const CallArgs& a) override {
    return n_ == 1 ? "copy (1 rank)" : fmt::format("ring {}ch", channels_for(a));
  }

 private:
  // Small messages use fewer channels: fewer, fuller slots. Same choice on every rank.
  int channels_for(const CallArgs& a) const {
    const std::size_t bytes =
        a.count * element_size(a.spec.dtype) * (a.spec.coll == Collective::allreduce ? 1 : static_cast<std::size_t>(n_));
    return blocks_for(bytes, 128 << 10, channels_);
  }
  int channels_ = 128;
  std::size_t slot_ = 0;
  std::unique_ptr<FifoMesh> mesh_;
  DeviceArray<SendConn> send_;
  DeviceArray<RecvConn> recv_;
};

// ---- tree ---------------------------------------------------------------------------------

class TreeGpu final : public GpuImpl {
 public:
  TreeGpu() : GpuImpl("tree") {}
  CollectiveSet collectives() const override { return {Collective::allreduce, Collective::allgather}; }
  std::optional<std::string> supports(const CaseSpec& s) const override {
    if (s.coll == Collective::allreduce || s.coll == Collective::allgather) return std::nullopt;
    return "tree on GPUs implements allreduce (double binary tree) and allgather (Bruck)";
  }
  void setup_kernels() override {
    channels_ = std::min(tree_channels(), resident_limit(ctx_.cuda_device, 4));
    slot_ = default_slot_bytes();
    peers_ = std::make_unique<PeerState>(ctx_.comm, kLowLatencyOffset);
    if (n_ == 1) return;
    const int C = channels_;
    mesh_ = std::make_unique<FifoMesh>(ctx_.comm, 6 * C, slot_);
    auto in_up = [&](int t, int c, int k) { return (t * C + c) * 3 + k; };
    auto in_down = [&](int t, int c) { return (t * C + c) * 3 + 2; };
    auto out_up = [&](int t, int c) { return (t * C + c) * 3; };
    auto out_down = [&](int t, int c, int k) { return (t * C + c) * 3 + 1 + k; };
    // Which child of `parent` this rank is in tree t.
    auto child_index = [&](int t, int parent) {
      return schedule::double_tree(n_, parent, t).child[0] == rank_ ? 0 : 1;
    };
    std::vector<SendConn> up_send(2 * C), down_send(4 * C);
    std::vector<RecvConn> up_recv(4 * C), down_recv(2 * C);
    for (int t = 0; t < 2; ++t) {
      const schedule::TreeLinks l = schedule::double_tree(n_, rank_, t);
      parent_[t] = l.parent;
      int nc = 0;
      int kids[2] = {-1, -1};
      for (int k = 0; k < 2; ++k)
        if (l.child[k] >= 0) kids[nc++] = l.child[k];
      nchildren_[t] = nc;
      for (int c = 0; c < C; ++c) {
        const int tc = t * C + c;
        if (l.parent >= 0) {
          const int k = child_index(t, l.parent);
          up_send[tc] = mesh_->send(l.parent, in_up(t, c, k), out_up(t, c));
          down_recv[tc] = mesh_->recv(l.parent, in_down(t, c), out_down(t, c, k));
        }
        for (int j = 0; j < nc; ++j) {
          // The kernel's child j is the j-th present child; its FIFO index at us is the link
          // index it holds in our TreeLinks (child_index from its side).
          const int link = schedule::double_tree(n_, rank_, t).child[0] == kids[j] ? 0 : 1;
          up_recv[tc * 2 + j] = mesh_->recv(kids[j], in_up(t, c, link), out_up(t, c));
          down_send[tc * 2 + j] = mesh_->send(kids[j], in_down(t, c), out_down(t, c, link));
        }
      }
    }
    up_send_ = DeviceArray<SendConn>(up_send);
    up_recv_ = DeviceArray<RecvConn>(up_recv);
    down_send_ = DeviceArray<SendConn>(down_send);
    down_recv_ = DeviceArray<RecvConn>(down_recv);
  }
  void attach(const BufferSet& b) override { peers_->attach(b, false, true); }
  void detach() override { peers_->detach(); }
  void run(const CallArgs& a) override {
    if (n_ == 1) return copy_alone(a);
    if (a.spec.coll == Collective::allgather) {
      launched(launch_bruck_allgather(peers_->params(a, rank_, n_, bruck_blocks(a), limits()), stream_));
      return;
    }
    TreeParams p{};
    p.dtype = a.spec.dtype;
    p.op = a.spec.op;
    p.nranks = n_;
    p.channels = channels_;
    p.send = a.send;
    p.recv = a.recv;
    p.count = a.count;
    p.slot_bytes = slot_;
    for (int t = 0; t < 2; ++t) {
      p.parent[t] = parent_[t];
      p.nchildren[t] = nchildren_[t];
    }
    p.up_send = up_send_.get();
    p.up_recv = up_recv_.get();
    p.down_send = down_send_.get();
    p.down_recv = down_recv_.get();
    p.limits = limits();
    launched(launch_tree(p, stream_));
  }
  std::string describe(const CallArgs& a) override {
    if (n_ == 1) return "copy (1 rank)";
    if (a.spec.coll == Collective::allgather) return fmt::format("bruck {}blk", bruck_blocks(a));
    return fmt::format("double tree 2x{}ch", channels_);
  }

 private:
  static int bruck_blocks(const CallArgs& a) { return blocks_for(a.count * element_size(a.spec.dtype), 64 << 10, 32); }
  int channels_ = 32;
  std::size_t slot_ = 0;
  int parent_[2] = {-1, -1}, nchildren_[2] = {0, 0};
  std::unique_ptr<FifoMesh> mesh_;
  DeviceArray<SendConn> up_send_, down_send_;
  DeviceArray<RecvConn> up_recv_, down_recv_;
  std::unique_ptr<PeerState> peers_;
};

// ---- one-shot -----------------------------------------------------------------------------

class OneshotGpu final : public GpuImpl {
 public:
  OneshotGpu() : GpuImpl("oneshot") {}
  CollectiveSet collectives() const override { return {Collective::allreduce}; }
  std::optional<std::string> supports(const CaseSpec& s) const override {
    if (s.coll == Collective::allreduce) return std::nullopt;
    return "oneshot implements allreduce";
  }
  std::optional<std::string> unsupported_count(const CaseSpec& s, std::size_t count) const override {
    if (count * element_size(s.dtype) <= max_bytes()) return std::nullopt;
    return fmt::format("oneshot handles up to {} bytes per rank (CCBENCH_ONESHOT_MAX_BYTES)", max_bytes());
  }
  void setup_kernels() override {
    ll_per_rank_ = max_bytes() * 2;  // a 16-byte line carries 8 bytes
    peers_ = std::make_unique<PeerState>(ctx_.comm, kLowLatencyOffset + 2 * static_cast<std::size_t>(n_) * ll_per_rank_);
  }
  void run(const CallArgs& a) override {
    if (n_ == 1) return copy_alone(a);
    PeerParams p = peers_->params(a, rank_, n_, blocks(a), limits());
    p.ll_bytes_per_rank = ll_per_rank_;
    launched(launch_oneshot(p, stream_));
  }
  std::string describe(const CallArgs& a) override {
    return n_ == 1 ? "copy (1 rank)" : fmt::format("oneshot {}blk", blocks(a));
  }
  static std::size_t max_bytes() { return oneshot_max_bytes(); }

 private:
  static int blocks(const CallArgs& a) { return blocks_for(a.count * element_size(a.spec.dtype), 8 << 10, 32); }
  std::size_t ll_per_rank_ = 0;
  std::unique_ptr<PeerState> peers_;
};

// ---- two-shot -----------------------------------------------------------------------------

class TwoshotGpu final : public GpuImpl {
 public:
  TwoshotGpu() : GpuImpl("twoshot") {}
  CollectiveSet collectives() const override { return {Collective::allreduce}; }
  std::optional<std::string> supports(const CaseSpec& s) const override {
    if (s.coll == Collective::allreduce) return std::nullopt;
    return "twoshot implements allreduce";
  }
  void setup_kernels() override {
    max_blocks_ = twoshot_blocks();
    peers_ = std::make_unique<PeerState>(ctx_.comm, kLowLatencyOffset);
  }
  void attach(const BufferSet& b) override { peers_->attach(b, true, true); }
  void detach() override { peers_->detach(); }
  void run(const CallArgs& a) override {
    if (n_ == 1) return copy_alone(a);
    launched(launch_twoshot(peers_->params(a, rank_, n_, blocks(a), limits()), stream_));
  }
  std::string describe(const CallArgs& a) override {
    return n_ == 1 ? "copy (1 rank)" : fmt::format("twoshot {}blk", blocks(a));
  }

 private:
  int blocks(const CallArgs& a) const {
    return blocks_for(a.count * element_size(a.spec.dtype) / static_cast<std::size_t>(n_), 64 << 10, max_blocks_);
  }
  int max_blocks_ = 128;
  std::unique_ptr<PeerState> peers_;
};

// ---- copy-engine all-gather -----------------------------------------------------------------

class CeGpu final : public GpuImpl {
 public:
  CeGpu() : GpuImpl("ce") {}
  CollectiveSet collectives() const override { return {Collective::allgather}; }
  ~CeGpu() override {
    for (auto e : events_) cudaEventDestroy(e);
    for (auto s : side_) cudaStreamDestroy(s);
  }
  std::optional<std::string> supports(const CaseSpec& s) const override {
    if (s.coll == Collective::allgather) return std::nullopt;
    return "ce implements allgather";
  }
  void setup_kernels() override {
    peers_ = std::make_unique<PeerState>(ctx_.comm, kLowLatencyOffset);
    // One side stream per peer so that the copy engines run the copies concurrently.
    for (int r = 0; r < n_; ++r) {
      cudaStream_t s;
      CCB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      side_.push_back(s);
    }
    events_.resize(static_cast<std::size_t>(n_) + 1);
    for (auto& e : events_) CCB_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  void attach(const BufferSet& b) override { peers_->attach(b, false, true); }
  void detach() override { peers_->detach(); }
  void run(const CallArgs& a) override {
    const std::size_t piece = a.count * element_size(a.spec.dtype);
    const std::size_t my_offset = static_cast<std::size_t>(rank_) * piece;
    char* mine = static_cast<char*>(a.recv) + my_offset;
    if (n_ == 1) {
      if (a.send != mine && piece) CCB_CUDA(cudaMemcpyAsync(mine, a.send, piece, cudaMemcpyDeviceToDevice, stream()));
      return;
    }
    const PeerParams p = peers_->params(a, rank_, n_, 1, limits());
    launched(launch_barrier(p, stream_));  // every peer's output may be written
    CCB_CUDA(cudaEventRecord(events_[0], stream()));
    for (int r = 0; r < n_; ++r) {
      if (r == rank_) continue;
      cudaStream_t s = side_[static_cast<std::size_t>(r)];
      CCB_CUDA(cudaStreamWaitEvent(s, events_[0], 0));
      char* dst = static_cast<char*>(peers_->recv_of(r)) + (static_cast<char*>(a.recv) - static_cast<char*>(peers_->recv_of(rank_))) + my_offset;
      if (piece) CCB_CUDA(cudaMemcpyAsync(dst, a.send, piece, cudaMemcpyDeviceToDevice, s));
      CCB_CUDA(cudaEventRecord(events_[static_cast<std::size_t>(r) + 1], s));
    }
    if (a.send != mine && piece) CCB_CUDA(cudaMemcpyAsync(mine, a.send, piece, cudaMemcpyDeviceToDevice, stream()));
    for (int r = 0; r < n_; ++r)
      if (r != rank_) CCB_CUDA(cudaStreamWaitEvent(stream(), events_[static_cast<std::size_t>(r) + 1], 0));
    launched(launch_barrier(p, stream_));  // every peer's copies into this output are done
  }
  std::string describe(const CallArgs&) override {
    return n_ == 1 ? "copy (1 rank)" : fmt::format("ce {} peer cop{}", n_ - 1, n_ == 2 ? "y" : "ies");
  }

 private:
  std::unique_ptr<PeerState> peers_;
  std::vector<cudaStream_t> side_;
  std::vector<cudaEvent_t> events_;
};

// ---- best: the fastest kernel for each size ---------------------------------------------------

class BestGpu final : public Implementation {
 public:
  CollectiveSet collectives() const override {
    return {Collective::allreduce, Collective::allgather, Collective::reducescatter};
  }
  BestGpu() {
    oneshot_ = make_oneshot_gpu();
    twoshot_ = make_twoshot_gpu();
    ring_ = make_ring_gpu();
    tree_ = make_tree_gpu();
    ce_ = make_ce_gpu();
  }
  std::optional<std::string> unsupported(const CaseSpec& s, const ImplContext& ctx) const override {
    if (s.coll == Collective::allreduce) return twoshot_->unsupported(s, ctx);
    if (s.coll == Collective::allgather) return ce_->unsupported(s, ctx);
    if (s.coll == Collective::reducescatter) return ring_->unsupported(s, ctx);
    return "best implements allreduce, allgather and reducescatter";
  }
  void setup(const ImplContext& ctx) override {
    for (auto* i : all()) i->setup(ctx);
    oneshot_max_ = best_oneshot_max();
    twoshot_max_ = best_twoshot_max();
    bruck_max_ = best_bruck_max();
    ring_allgather_max_ = best_ring_allgather_max();
  }
  void attach(const BufferSet& b) override {
    for (auto* i : all()) i->attach(b);
  }
  void detach() override {
    for (auto* i : all()) i->detach();
  }
  void check_async_errors() override {
    for (auto* i : all()) i->check_async_errors();
  }
  void run(const CallArgs& a) override { pick(a).run(a); }
  std::string transport() const override { return "cuda_ipc"; }
  bool graph_capturable() const override { return true; }
  std::string describe(const CallArgs& a) override { return pick(a).describe(a); }

 private:
  Implementation& pick(const CallArgs& a) const {
    const std::size_t bytes = a.count * element_size(a.spec.dtype);
    if (a.spec.coll == Collective::allreduce) {
      if (bytes <= oneshot_max_) return *oneshot_;
      return bytes <= twoshot_max_ ? *twoshot_ : *ring_;
    }
    if (a.spec.coll == Collective::allgather) {
      if (bytes <= bruck_max_) return *tree_;
      return bytes <= ring_allgather_max_ ? *ring_ : *ce_;
    }
    return *ring_;
  }
  std::vector<Implementation*> all() const {
    return {oneshot_.get(), twoshot_.get(), ring_.get(), tree_.get(), ce_.get()};
  }
  std::unique_ptr<Implementation> oneshot_, twoshot_, ring_, tree_, ce_;
  std::size_t oneshot_max_ = 0, twoshot_max_ = 0, bruck_max_ = 0, ring_allgather_max_ = 0;
};

}  // namespace

void check_gpu_tuning_environment() {
  default_slot_bytes();
  ring_channels();
  tree_channels();
  twoshot_blocks();
  best_oneshot_max();  // reads CCBENCH_ONESHOT_MAX_BYTES too
  best_twoshot_max();
  best_bruck_max();
  best_ring_allgather_max();
}

std::unique_ptr<Implementation> make_ring_gpu() { return std::make_unique<RingGpu>(); }
std::unique_ptr<Implementation> make_tree_gpu() { return std::make_unique<TreeGpu>(); }
std::unique_ptr<Implementation> make_oneshot_gpu() { return std::make_unique<OneshotGpu>(); }
std::unique_ptr<Implementation> make_twoshot_gpu() { return std::make_unique<TwoshotGpu>(); }
std::unique_ptr<Implementation> make_ce_gpu() { return std::make_unique<CeGpu>(); }
std::unique_ptr<Implementation> make_best_gpu() { return std::make_unique<BestGpu>(); }

}  // namespace ccbench
