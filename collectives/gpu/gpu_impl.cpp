#include "collectives/gpu/gpu_impl.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/checks.h"
#include "core/error.h"
#include "transports/gpu/host_copy.h"

namespace ccbench::gpu {

int blocks_for(std::size_t bytes, std::size_t bytes_per_block, int max_blocks) {
  std::size_t b = (bytes + bytes_per_block - 1) / bytes_per_block;
  return static_cast<int>(std::clamp<std::size_t>(b, 1, static_cast<std::size_t>(max_blocks)));
}

namespace {

int visible_gpus() {
  int gpus = 1;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) gpus = 1;
  return gpus;
}

// Copy-engine staging over host needs a GPU per rank: a copy into a GPU whose SMs another
// process's spinning kernel holds waits for that GPU's time slice (3 ranks on 2 x H200: 4.7-7 ms
// per all-reduce call at any size, and the tree's kernels timed out at 324 B; h200x2-20261130-r8).
std::optional<std::string> shared_gpus_with_ce(const GpuPaths& paths, const RankLayout& l, int gpus) {
  if (!paths.uses(Transport::host) || !host_copy_modes().any_ce()) return std::nullopt;
  const int r = l.first_rank_sharing_a_gpu(gpus);
  if (r < 0) return std::nullopt;
  return fmt::format(
      "copy-engine staging over host (CCBENCH_GPU_HOST_RECV/SEND=ce) needs a GPU per rank, and ranks "
      "share the {} GPU(s) of host {}: unset them, or run one rank per GPU",
      gpus, l.host_of[static_cast<std::size_t>(r)]);
}

}  // namespace

RankLayout run_layout(const ImplContext& ctx) {
  if (ctx.layout) return *ctx.layout;
  int n = 1, rank = 0;
  MPI_Comm_size(ctx.comm, &n);
  MPI_Comm_rank(ctx.comm, &rank);
  return RankLayout::from_hosts(rank, std::vector<std::string>(static_cast<std::size_t>(n), "."));
}

bool gpus_shared(const ImplContext& ctx) { return run_layout(ctx).first_rank_sharing_a_gpu(visible_gpus()) >= 0; }

GpuPaths plan_paths(const ImplContext& ctx) {
  const RankLayout l = run_layout(ctx);
  const int gpus = visible_gpus();
  if (!l.gpu_peer_access.empty()) {  // agreed by the harness from every rank's own GPU
    const PeerAccess agreed = [&](int a, int b) {
      return static_cast<bool>(l.gpu_peer_access[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)]);
    };
    return plan_gpu_paths(l, ctx.transport, agreed, ctx.ib_unavailable);
  }
  auto device = [&](int r) { return l.host_local_rank(r) % gpus; };
  const PeerAccess access = [&](int a, int b) {
    if (l.same_gpu(a, b, gpus)) return true;  // ranks sharing a GPU (--share-gpus) map each other's memory
    const int da = device(a), db = device(b);
    int ab = 0, ba = 0;
    if (cudaDeviceCanAccessPeer(&ab, da, db) != cudaSuccess || cudaDeviceCanAccessPeer(&ba, db, da) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return ab && ba;
  };
  return plan_gpu_paths(l, ctx.transport, access, ctx.ib_unavailable);
}

std::optional<std::string> GpuImpl::unsupported(const CaseSpec& s, const ImplContext& ctx) const {
  if (ctx.device != Device::gpu) return name_ + " runs on GPU ranks";
  if (ctx.layout && ctx.layout->nranks > kMaxRanks)
    return fmt::format("our GPU kernels address at most {} ranks", kMaxRanks);
  if (auto why = undeclared_collective(*this, name_, s.coll)) return why;
  const GpuPaths paths = plan_paths(ctx);
  if (!paths.refused.empty()) return paths.refused;
  if (auto why = shared_gpus_with_ce(paths, run_layout(ctx), visible_gpus())) return why;
  if (direct_access(s) && !paths.only(Transport::p2p))
    return fmt::format(
        "{} reads and writes peer GPU memory directly, so it runs over p2p only (this run connects "
        "the GPUs over {})",
        name_, paths.label);
  return std::nullopt;
}

int GpuImpl::resident_limit(int blocks_per_channel) const {
  return std::max(1, agreed_sms_ / std::max(1, gpu_sharers_) / blocks_per_channel);
}

void GpuImpl::setup(const ImplContext& ctx) {
  ctx_ = ctx;
  MPI_Comm_rank(ctx.comm, &rank_);
  MPI_Comm_size(ctx.comm, &n_);
  stream_ = ctx.stream;
  CCB_CUDA(cudaSetDevice(ctx.cuda_device));
  errors_ = std::make_unique<DeviceErrors>();
  own_layout_ = RankLayout::from_hosts(rank_, std::vector<std::string>(static_cast<std::size_t>(n_), "."));
  // What the grids are sized by, agreed: the fewest SMs (beside a load: those it leaves) and the
  // most ranks sharing a GPU.
  int sms = 0;
  CCB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.cuda_device));
  if (ctx.collective_sms > 0) sms = std::min(sms, ctx.collective_sms);  // beside an --overlap load
  int sharers = 0;
  const RankLayout& l = layout();
  for (int r = 0; r < l.nranks; ++r) sharers += l.same_node(rank_, r) && l.same_gpu(rank_, r, visible_gpus());
  check_mpi(MPI_Allreduce(&sms, &agreed_sms_, 1, MPI_INT, MPI_MIN, ctx.comm), "MPI_Allreduce of SM counts");
  check_mpi(MPI_Allreduce(&sharers, &gpu_sharers_, 1, MPI_INT, MPI_MAX, ctx.comm), "MPI_Allreduce of GPU sharers");
  paths_ = plan_paths(ctx);
  if (!paths_.refused.empty()) fail(ExitCode::precondition, "{}: {}", name_, paths_.refused);
  setup_kernels();
}

void GpuImpl::check_async_errors() {
  check_connections();
  if (errors_) errors_->check(name_.c_str(), rank_, ctx_.timeout);
}

void GpuImpl::copy_alone(const CallArgs& a) const {
  const std::size_t bytes = a.count * element_size(a.spec.dtype);
  if (a.send != a.recv && bytes) CCB_CUDA(cudaMemcpyAsync(a.recv, a.send, bytes, cudaMemcpyDeviceToDevice, stream()));
}

}  // namespace ccbench::gpu
