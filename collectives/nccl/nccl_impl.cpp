#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "collectives/nccl/nccl_config.h"
#include "collectives/nccl/nccl_impls.h"
#include "collectives/nccl/nccl_library.h"
#include "collectives/nccl/nccl_profiler.h"
#include "core/checks_cuda.h"
#include "core/error.h"
#include "transports/nccl_path.h"

namespace ccbench {

namespace {

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::int8: return ncclInt8;
    case DataType::uint8: return ncclUint8;
    case DataType::int32: return ncclInt32;
    case DataType::uint32: return ncclUint32;
    case DataType::int64: return ncclInt64;
    case DataType::uint64: return ncclUint64;
    case DataType::float16: return ncclFloat16;
    case DataType::bfloat16: return ncclBfloat16;
    case DataType::float32: return ncclFloat32;
    case DataType::float64: return ncclFloat64;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case DataType::f8e4m3: return ncclFloat8e4m3;
    case DataType::f8e5m2: return ncclFloat8e5m2;
#else
    case DataType::f8e4m3:
    case DataType::f8e5m2: break;  // unsupported() skips them
#endif
  }
  return ncclFloat32;
}

// NCCL has fp8 from 2.24 (ncclFloat8e4m3, ncclFloat8e5m2) and reduces it only on compute
// capability 9.0 and later: enqueue.cc refuses it below with "FP8 reduction support begins with
// sm90 capable devices" (data movement runs anywhere), deciding from the job's lowest capability.
constexpr int kFp8NcclVersion = 22400;
constexpr int kFp8ReduceCapability = 90;

std::optional<std::string> fp8_unsupported(const CaseSpec& s, int min_capability) {
  if (s.dtype != DataType::f8e4m3 && s.dtype != DataType::f8e5m2) return std::nullopt;
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 24, 0)
  return fmt::format("{} needs NCCL >= 2.24 at build time (nccl.h {}.{})", name(s.dtype), NCCL_MAJOR, NCCL_MINOR);
#else
  const NcclApi* api = nccl_api();
  if (api && api->version < kFp8NcclVersion)
    return fmt::format("{} needs NCCL >= 2.24, the library loaded is {} ({})", name(s.dtype), api->version_text(),
                       api->path);
  // NCCL (as installed on the H200 machine) refuses avg of fp8 with "invalid argument" where sum, prod,
  // min and max run (evidence h200x1-20261201-r26).
  if (has_reduce_op(s.coll) && s.op == ReduceOp::avg)
    return fmt::format("NCCL does not take avg of {} (ncclAvg: invalid argument); sum, prod, min and max it does",
                       name(s.dtype));
  if (has_reduce_op(s.coll) && min_capability < kFp8ReduceCapability)
    return fmt::format("NCCL reduces {} on compute capability >= 9.0 only; the lowest GPU of this job is {}.{}",
                       name(s.dtype), min_capability / 10, min_capability % 10);
  return std::nullopt;
#endif
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::avg: return ncclAvg;
    default: return ncclSum;
  }
}

// Sets an environment variable for the lifetime of the object, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* key, const char* value) : key_(key) {
    if (!value) return;
    if (const char* old = std::getenv(key)) old_ = old;
    had_ = std::getenv(key) != nullptr;
    setenv(key, value, 1);
    active_ = true;
  }
  ~ScopedEnv() {
    if (!active_) return;
    if (had_) setenv(key_, old_.c_str(), 1);
    else unsetenv(key_);
  }

 private:
  const char* key_;
  std::string old_;
  bool had_ = false, active_ = false;
};

// The NCCL a --nccl-config key needs (the release that added the ncclConfig_t field), checked
// against the header at build time and the library loaded; 0 for the environment keys.
int config_key_version(const NcclSetting& s) {
  const std::string& key = s.key;
  if (key == "trafficClass") return NCCL_VERSION(2, 26, 0);
  if (key == "CTAPolicy") return nccl_cta_policy(s.value) == 2 ? NCCL_VERSION(2, 28, 0) : NCCL_VERSION(2, 27, 0);
  if (key == "minCTAs" || key == "maxCTAs" || key == "cgaClusterSize" || key == "netName")
    return NCCL_VERSION(2, 17, 0);
  return 0;
}

std::optional<std::string> config_unsupported(const NcclConfig& config, ImplId variant) {
  if (auto why = nccl_config_conflict(config)) return why;
  for (const NcclSetting& s : config.settings) {
    if (s.is_default()) continue;
    for (const NcclConfigKey& k : nccl_config_keys())
      if (k.overridden_by && s.key == k.name)
        if (const char* env = std::getenv(k.overridden_by))
          return fmt::format(
              "{}={} in the environment overrides --nccl-config {} (NCCL resets the communicator's "
              "config from it): unset it",
              k.overridden_by, env, s.key);
    if (s.key == "NCCL_ALGO" && (variant == ImplId::nccl_ring || variant == ImplId::nccl_tree))
      return fmt::format("{} sets NCCL_ALGO itself; --nccl-config NCCL_ALGO applies to {} and {}", name(variant),
                         name(ImplId::nccl), name(ImplId::nccl_symm));
    const int need = config_key_version(s);
    if (need > NCCL_VERSION_CODE)
      return fmt::format("--nccl-config {} needs NCCL >= {}.{} at build time (nccl.h {}.{})", s.key, need / 10000,
                         need % 10000 / 100, NCCL_MAJOR, NCCL_MINOR);
    const NcclApi* api = nccl_api();
    if (api && api->version < need)
      return fmt::format("--nccl-config {} needs NCCL >= {}.{}, the library loaded is {} ({})", s.key, need / 10000,
                         need % 10000 / 100, api->version_text(), api->path);
  }
  return std::nullopt;
}

// The ncclConfig_t fields of `config` (values checked by nccl_config_combinations; config_unsupported
// refused those this header lacks). netName points into `config`, which outlives the communicator's creation.
void apply_config(const NcclConfig& config, ncclConfig_t& c) {
  for (const NcclSetting& s : config.settings) {
    if (s.is_default()) continue;
    if (s.key == "minCTAs") c.minCTAs = std::stoi(s.value);
    else if (s.key == "maxCTAs") c.maxCTAs = std::stoi(s.value);
    else if (s.key == "cgaClusterSize") c.cgaClusterSize = std::stoi(s.value);
    else if (s.key == "netName") c.netName = s.value.c_str();
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 26, 0)
    else if (s.key == "trafficClass") c.trafficClass = std::stoi(s.value);
#endif
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    else if (s.key == "CTAPolicy") c.CTAPolicy = nccl_cta_policy(s.value);
#endif
  }
}

// The value `config` gives environment key `key` (NCCL_ALGO, NCCL_PROTO), else `fallback`.
const char* config_env(const NcclConfig& config, const char* key, const char* fallback) {
  for (const NcclSetting& s : config.settings)
    if (s.key == key && !s.is_default()) return s.value.c_str();
  return fallback;
}

// ncclMemAlloc memory; remembers each allocation so that windows cover whole allocations.
class SymmetricAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    ncclResult_t rc = nccl().MemAlloc(&p, bytes);
    if (rc != ncclSuccess)
      fail(ExitCode::precondition, "ncclMemAlloc of {} bytes failed: {}", bytes, nccl().GetErrorString(rc));
    sizes_[p] = bytes;
    return p;
  }
  void release(void* p) override {
    sizes_.erase(p);
    nccl().MemFree(p);
  }
  // The allocation holding `p`: its start and size.
  std::pair<void*, size_t> allocation_of(const void* p) const {
    for (const auto& [base, size] : sizes_)
      if (p >= base && static_cast<const char*>(p) < static_cast<const char*>(base) + size) return {base, size};
    fail(ExitCode::runtime, "a buffer given to nccl-symm was not allocated by its allocator");
  }

 private:
  std::map<void*, size_t> sizes_;
};

// NCCL refuses two ranks of one node on one GPU at communicator set-up ("invalid usage"): known
// before NCCL is called, from the GPUs the harness identified by bus id (RankLayout::gpu_of).
std::optional<std::string> shared_gpu_reason(const ImplContext& ctx) {
  if (!ctx.layout || ctx.layout->gpu_of.empty()) return std::nullopt;
  const RankLayout& l = *ctx.layout;
  const int b = l.first_rank_sharing_a_gpu(0);
  if (b < 0) return std::nullopt;
  int a = 0;
  while (!(l.same_node(a, b) && l.same_gpu(a, b, 0))) ++a;
  return fmt::format(
      "ranks {} and {} of node {} share GPU {} (--share-gpus), and NCCL refuses two ranks of one node "
      "on one GPU: run one rank per GPU, or put them on different emulated nodes (--emulate-nodes N; "
      "NCCL then connects them over NET/Socket)",
      a, b, l.host_of[static_cast<std::size_t>(b)], l.gpu_of[static_cast<std::size_t>(b)]);
}

class NcclImpl final : public Implementation {
 public:
  explicit NcclImpl(ImplId v, NcclConfig config = {}) : variant_(v), config_(std::move(config)) {}
  ~NcclImpl() override {
    detach();
    if (comm_) {
      api_->CommFinalize(comm_);
      wait_async("ncclCommFinalize", std::chrono::seconds(30), /*throw_on_timeout=*/false);
      api_->CommDestroy(comm_);
    }
  }

  // NCCL_ALGO=Tree: NCCL has a tree algorithm for all-reduce only.
  CollectiveSet collectives() const override {
    if (variant_ == ImplId::nccl_tree) return {Collective::allreduce};
    return {Collective::allreduce, Collective::allgather, Collective::reducescatter, Collective::broadcast,
            Collective::sendrecv,  Collective::alltoall,  Collective::alltoallv,     Collective::reduce,
            Collective::gather,    Collective::scatter};
  }

  // Without a loadable NCCL (a CPU-only node, a wrong --nccl-library) every NCCL row is skipped
  // with the reason; so are ranks sharing a GPU within a node.
  std::optional<std::string> refuses(const ImplContext& ctx) const override {
    std::string why;
    if (!nccl_api(&why)) return why;
    if (auto why_config = config_unsupported(config_, variant_)) return why_config;
    if (auto no_path = nccl_path_refusal()) return no_path;  // the path asked for has no NCCL (ofi without its plugin)
    return shared_gpu_reason(ctx);
  }

  std::optional<std::string> unsupported(const CaseSpec& s, const ImplContext& ctx) const override {
    if (auto why = undeclared_collective(*this, variant_name(), s.coll)) return why;
    if (ctx.device != Device::gpu) return "NCCL runs on GPU ranks";
    if (auto why = fp8_unsupported(s, min_capability_)) return why;
    if (variant_ == ImplId::nccl_symm) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
      const NcclApi* api = nccl_api();
      if (api && (!api->CommWindowRegister || !api->MemAlloc || api->version < NCCL_VERSION(2, 27, 0)))
        return fmt::format("symmetric windows need NCCL >= 2.27, the library loaded is {} ({})", api->version_text(),
                           api->path);
#else
      return "symmetric windows need NCCL >= 2.27 at build time";
#endif
    }
    return std::nullopt;
  }

  void setup(const ImplContext& ctx) override {
    api_ = &nccl();
    ctx_ = ctx;
    stream_ = static_cast<cudaStream_t>(ctx.stream);
    MPI_Comm_rank(ctx.comm, &rank_);
    MPI_Comm_size(ctx.comm, &nranks_);
    ncclUniqueId id{};
    if (rank_ == 0) CCB_NCCL(api_->GetUniqueId(&id));
    if (MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, ctx.comm) != MPI_SUCCESS)
      fail(ExitCode::runtime, "MPI_Bcast of the NCCL unique id failed");
    setenv("NCCL_NVLS_ENABLE", "0", 0);  // never NVLink SHARP unless the user asked for it
    enable_nccl_choice_probe();
    // NCCL reads NCCL_ALGO and NCCL_PROTO when it tunes a new communicator (nccl_config.h).
    ScopedEnv algo("NCCL_ALGO", config_env(config_, "NCCL_ALGO",
                                           variant_ == ImplId::nccl_ring   ? "Ring"
                                           : variant_ == ImplId::nccl_tree ? "Tree"
                                                                           : nullptr));
    ScopedEnv proto("NCCL_PROTO", config_env(config_, "NCCL_PROTO", nullptr));
    CCB_CUDA(cudaSetDevice(ctx.cuda_device));
    min_capability_ = lowest_capability(ctx);
    // A blocking communicator, as nccl-tests uses: a non-blocking one (config.blocking = 0)
    // made every small collective take 50-120 us (h200x2-20261130-sweep-32f952a). A hang in
    // initialisation is bounded by the harness's watchdog instead.
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;
    apply_config(config_, config);
    ncclComm_t comm = nullptr;
    CCB_NCCL(api_->CommInitRankConfig(&comm, nranks_, id, rank_, &config));
    comm_ = comm;
    wait_async("ncclCommInitRankConfig", ctx.timeout, true);
  }

  Allocator* allocator() override { return variant_ == ImplId::nccl_symm ? &symm_alloc_ : nullptr; }

  void attach(const BufferSet& b) override {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    if (variant_ != ImplId::nccl_symm) return;
    for (void* buffer : {b.send, b.recv}) {
      // The whole ncclMemAlloc allocation, guard regions included: every rank's window then
      // starts at the same offset of its allocation.
      auto [base, bytes] = symm_alloc_.allocation_of(buffer);
      ncclWindow_t w{};
      CCB_NCCL(api_->CommWindowRegister(comm_, base, bytes, &w, NCCL_WIN_COLL_SYMMETRIC));
      wait_async("ncclCommWindowRegister", ctx_.timeout, true);
      windows_.push_back(w);
    }
#else
    (void)b;
#endif
  }

  void detach() override {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    for (ncclWindow_t w : windows_) {
      api_->CommWindowDeregister(comm_, w);
      wait_async("ncclCommWindowDeregister", std::chrono::seconds(30), false);
    }
#endif
    windows_.clear();
  }

  void run(const CallArgs& a) override {
    if (auto why = undeclared_collective(*this, variant_name(), a.spec.coll)) fail(ExitCode::usage, "{}", *why);
    const ncclDataType_t t = nccl_type(a.spec.dtype);
    ncclResult_t rc = ncclSuccess;
    switch (a.spec.coll) {
      case Collective::allreduce:
        rc = CCB_NCCL(api_->AllReduce(a.send, a.recv, a.count, t, nccl_op(a.spec.op), comm_, stream_));
        break;
      case Collective::allgather: rc = CCB_NCCL(api_->AllGather(a.send, a.recv, a.count, t, comm_, stream_)); break;
      case Collective::reducescatter:
        rc = CCB_NCCL(api_->ReduceScatter(a.send, a.recv, a.count, t, nccl_op(a.spec.op), comm_, stream_));
        break;
      case Collective::broadcast:
        rc = CCB_NCCL(api_->Broadcast(a.send, a.recv, a.count, t, a.spec.root, comm_, stream_));
        break;
      case Collective::reduce:
        rc = CCB_NCCL(api_->Reduce(a.send, a.recv, a.count, t, nccl_op(a.spec.op), a.spec.root, comm_, stream_));
        break;
      case Collective::sendrecv:
      case Collective::alltoall:
      case Collective::alltoallv:
      case Collective::gather:
      case Collective::scatter: rc = point_to_point(a, t); break;
    }
    if (rc == ncclInProgress) wait_async("NCCL collective", ctx_.timeout, true);
  }

  // One NCCL group of n collectives: NCCL launches them together (nccl-tests' -m).
  void run_aggregated(const CallArgs& a, int n) override {
    if (n == 1) return run(a);
    CCB_NCCL(api_->GroupStart());
    for (int i = 0; i < n; ++i) run(a);
    const ncclResult_t rc = CCB_NCCL(api_->GroupEnd());
    if (rc == ncclInProgress) wait_async("NCCL group", ctx_.timeout, true);
  }

  // What NCCL connected over when its path was pinned, from its own log. NCCL connects at the
  // first collective (runtime connect), so this is asked again after every measurement.
  std::string transport() const override { return nccl_path_label(); }
  bool graph_capturable() const override { return true; }
  std::string abort_from_watchdog() override {
    ncclComm_t c = comm_.exchange(nullptr);
    if (!c) return {};
    api_->CommAbort(c);
    return fmt::format("NCCL communicator of rank {} aborted (ncclCommAbort)", rank_);
  }
  void probe_begin() override { arm_nccl_choice_probe(); }
  std::string describe(const CallArgs&) override { return take_nccl_choice(); }
  void check_async_errors() override {
    ncclResult_t state = ncclSuccess;
    if (comm_ && api_->CommGetAsyncError(comm_, &state) == ncclSuccess && state != ncclSuccess &&
        state != ncclInProgress)
      fail(ExitCode::runtime, "NCCL reported an asynchronous error on rank {}: {} ({})", rank_,
           api_->GetErrorString(state), api_->GetLastError(comm_));
  }

 private:
  // The collectives NCCL runs as grouped ncclSend/ncclRecv (as nccl-tests does): one send and one
  // receive per peer that exchanges data with this rank; a rank's own block where it both sends and
  // receives it goes through NCCL too (a copy), except when in place already puts it there.
  ncclResult_t point_to_point(const CallArgs& a, ncclDataType_t t) {
    const size_t esz = element_size(a.spec.dtype), c = a.count;
    const char* send = static_cast<const char*>(a.send);
    char* recv = static_cast<char*>(a.recv);
    const int root = a.spec.root;
    CCB_NCCL(api_->GroupStart());
    auto exchange = [&](int peer, const char* from, size_t send_count, char* into, size_t recv_count) {
      if (peer == rank_ && from == into) return;  // in place: my block is where it belongs
      if (from && send_count) CCB_NCCL(api_->Send(from, send_count, t, peer, comm_, stream_));
      if (into && recv_count) CCB_NCCL(api_->Recv(into, recv_count, t, peer, comm_, stream_));
    };
    switch (a.spec.coll) {
      case Collective::sendrecv:
        CCB_NCCL(api_->Send(send, c, t, (rank_ + 1) % nranks_, comm_, stream_));
        CCB_NCCL(api_->Recv(recv, c, t, (rank_ + nranks_ - 1) % nranks_, comm_, stream_));
        break;
      case Collective::alltoall:
        for (int p = 0; p < nranks_; ++p) exchange(p, send + p * c * esz, c, recv + p * c * esz, c);
        break;
      case Collective::alltoallv:
        for (int p = 0; p < nranks_; ++p)
          exchange(p, send + alltoallv_send_offset(rank_, p, nranks_, c) * esz, alltoallv_block(rank_, p, nranks_, c),
                   recv + alltoallv_recv_offset(rank_, p, nranks_, c) * esz, alltoallv_block(p, rank_, nranks_, c));
        break;
      case Collective::gather:  // every rank to the root's block `rank`
        for (int p = 0; p < nranks_; ++p)
          if (p == root || rank_ == root)
            exchange(p, p == root ? send : nullptr, c, rank_ == root ? recv + p * c * esz : nullptr, c);
        break;
      case Collective::scatter:  // the root's block p to rank p
        for (int p = 0; p < nranks_; ++p)
          if (p == root || rank_ == root)
            exchange(p, rank_ == root ? send + p * c * esz : nullptr, c, p == root ? recv : nullptr, c);
        break;
      case Collective::allreduce:
      case Collective::allgather:
      case Collective::reducescatter:
      case Collective::broadcast:
      case Collective::reduce: fail(ExitCode::runtime, "{} is not a point-to-point group", name(a.spec.coll));
    }
    return CCB_NCCL(api_->GroupEnd());
  }

  // The job's lowest compute capability (major * 10 + minor), agreed over the ranks as NCCL does.
  static int lowest_capability(const ImplContext& ctx) {
    int major = 0, minor = 0;
    CCB_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx.cuda_device));
    CCB_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ctx.cuda_device));
    int mine = major * 10 + minor, lowest = mine;
    if (MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, ctx.comm) != MPI_SUCCESS)
      fail(ExitCode::runtime, "MPI_Allreduce of the GPUs' compute capability failed");
    return lowest;
  }

  std::string_view variant_name() const { return name(variant_); }

  // Non-blocking communicators: a call may still be in progress when it returns.
  void wait_async(const char* what, std::chrono::milliseconds limit, bool throw_on_timeout) {
    if (!comm_) return;
    auto start = std::chrono::steady_clock::now();
    ncclResult_t state = ncclInProgress;
    while (true) {
      api_->CommGetAsyncError(comm_, &state);
      if (state != ncclInProgress) break;
      if (std::chrono::steady_clock::now() - start > limit) {
        if (!throw_on_timeout) return;
        if (ncclComm_t c = comm_.exchange(nullptr)) api_->CommAbort(c);
        fail(ExitCode::timeout, "{} did not complete within {} s on rank {}; NCCL communicator aborted", what,
             limit.count() / 1000.0, rank_);
      }
      std::this_thread::yield();
    }
    if (state != ncclSuccess)
      fail(ExitCode::runtime, "NCCL error in {} on rank {}: {} ({})", what, rank_, api_->GetErrorString(state),
           api_->GetLastError(comm_));
  }

  ImplId variant_;                // nccl, nccl_ring, nccl_tree or nccl_symm
  NcclConfig config_;             // --nccl-config: this communicator's settings
  const NcclApi* api_ = nullptr;  // set by setup(), which refuses() lets run only with NCCL loaded
  ImplContext ctx_;
  std::atomic<ncclComm_t> comm_{nullptr};  // the watchdog thread may abort it
  cudaStream_t stream_ = nullptr;
  int rank_ = 0, nranks_ = 1;
  int min_capability_ = 0;  // set by setup(), before any unsupported()
  SymmetricAllocator symm_alloc_;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  std::vector<ncclWindow_t> windows_;
#else
  std::vector<int> windows_;
#endif
};

}  // namespace

std::unique_ptr<Implementation> make_nccl_default() { return std::make_unique<NcclImpl>(ImplId::nccl); }
std::unique_ptr<Implementation> make_nccl_ring() { return std::make_unique<NcclImpl>(ImplId::nccl_ring); }
std::unique_ptr<Implementation> make_nccl_tree() { return std::make_unique<NcclImpl>(ImplId::nccl_tree); }
std::unique_ptr<Implementation> make_nccl_symm() { return std::make_unique<NcclImpl>(ImplId::nccl_symm); }

std::unique_ptr<Implementation> make_nccl_configured(ImplId variant, const NcclConfig& config) {
  return std::make_unique<NcclImpl>(variant, config);
}

std::string nccl_library_version() {
  std::string why;
  const NcclApi* api = nccl_api(&why);
  return api ? api->version_text() : "none (" + why + ")";
}

}  // namespace ccbench
