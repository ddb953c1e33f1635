// hier on GPU ranks: the two-level all-reduce and all-gather of hier_plan.h, composed of our ring
// (ring_impl.cpp) on two sub-communicators: the ranks of this rank's node (the intra-node path)
// and the ranks with its local index on every node (the inter-node path). Every step goes onto
// the rank's stream back to back, so one measured call (and one CUDA-graph capture) covers all.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "collectives/gpu/gpu_impl.h"
#include "collectives/gpu/gpu_impls.h"
#include "collectives/gpu/hier_plan.h"
#include "core/checks.h"
#include "core/checks_cuda.h"
#include "core/error.h"

namespace ccbench {

namespace {

using gpu::run_layout;
using hier::Level;

// `run` narrowed to one level's ring: its communicator, layout and ring order.
ImplContext level_context(const ImplContext& run, MPI_Comm comm, const RankLayout& level,
                          const std::vector<int>& members) {
  ImplContext c = run;
  c.comm = comm;
  c.layout = &level;
  c.ring_order = hier::level_ring_order(run.ring_order, members);
  return c;
}

const char* where(Level level) { return level == Level::node ? "in the node" : "across the nodes"; }

// Why hier cannot run `s` here: the layout, or a level ring's own reason (its paths).
std::optional<std::string> problem(const CaseSpec& s, const ImplContext& ctx) {
  const RankLayout run = run_layout(ctx);
  if (auto why = hier::layout_problem(run, s.coll)) return why;
  for (Level level : {Level::node, Level::across}) {
    const std::vector<int> members = hier::level_members(run, level);
    if (members.size() == 1) continue;
    const RankLayout sub = run.subset(members);
    if (auto why = make_ring_gpu()->unsupported(s, level_context(ctx, ctx.comm, sub, members)))
      return fmt::format("hier's ring {}: {}", where(level), *why);
  }
  return std::nullopt;
}

// Our ring over one level's sub-communicator; none where the level has one rank.
class LevelRing {
 public:
  LevelRing() = default;
  LevelRing(const LevelRing&) = delete;
  LevelRing& operator=(const LevelRing&) = delete;
  ~LevelRing() {
    ring_.reset();  // its connections first: they were set up over the communicator
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  // Collective over ctx.comm: every rank splits, whatever the size of its level.
  void open(const ImplContext& ctx, const RankLayout& run, Level level) {
    check_mpi(MPI_Comm_split(ctx.comm, hier::color_of(run, level), run.rank, &comm_), "MPI_Comm_split for hier");
    members_ = hier::level_members(run, level);
    if (members_.size() == 1) return;
    layout_ = run.subset(members_);
    // Across the nodes the sums complete: avg divides by the ranks of the whole run there.
    ring_ = level == Level::across ? make_ring_gpu_avg_over(run.nranks) : make_ring_gpu();
    ring_->setup(level_context(ctx, comm_, layout_, members_));  // the ring keeps &layout_
  }
  Implementation* ring() const { return ring_.get(); }
  // The ring's errors name ranks of its communicator: said which ranks of the run those are.
  void check_async_errors(Level level) const {
    if (!ring_) return;
    try {
      ring_->check_async_errors();
    } catch (const Error& e) {
      throw e.with_context(fmt::format("hier's ring {} (its ranks 0..{} are ranks {} of the run)", where(level),
                                       members_.size() - 1, fmt::join(members_, " ")));
    }
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<int> members_;
  RankLayout layout_;
  std::unique_ptr<Implementation> ring_;
};

class HierGpu final : public Implementation {
 public:
  CollectiveSet collectives() const override { return {Collective::allreduce, Collective::allgather}; }
  std::optional<std::string> unsupported(const CaseSpec& s, const ImplContext& ctx) const override {
    if (ctx.device != Device::gpu) return std::string("hier's rings run on GPU ranks");
    if (auto why = undeclared_collective(*this, name(ImplId::hier), s.coll)) return why;
    if (!refusal_.empty()) return refusal_;
    return problem(s, ctx);
  }
  // The all-gather's reordering copies: rows of up to L * C elements apart (cudaMemcpy2D's pitch).
  std::optional<std::string> unsupported_count(const CaseSpec& s, std::size_t count) const override {
    const std::size_t esz = element_size(s.dtype);
    for (const hier::Step& st : hier::plan(s.coll, count, shape_))
      if (st.kind == hier::Step::Kind::copy && st.height > 1 && st.dst_pitch * esz > max_pitch_)
        return fmt::format("hier's all-gather reorders with strided copies of at most {} B per row; this size needs {}",
                           max_pitch_, st.dst_pitch * esz);
    return std::nullopt;
  }
  void setup(const ImplContext& ctx) override {
    stream_ = static_cast<cudaStream_t>(ctx.stream);
    CCB_CUDA(cudaSetDevice(ctx.cuda_device));
    int pitch = 0;
    CCB_CUDA(cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, ctx.cuda_device));
    max_pitch_ = static_cast<std::size_t>(pitch);
    // Agreed, as the splits below are collective: then unsupported() skips every case with the reason.
    const std::optional<std::string> why = problem(CaseSpec{}, ctx);
    int refused = why ? 1 : 0;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &refused, 1, MPI_INT, MPI_MAX, ctx.comm), "MPI_Allreduce for hier");
    if (refused) {
      refusal_ = why ? *why : "hier cannot run on another rank of this run (its layout or paths)";
      return;
    }
    const RankLayout run = run_layout(ctx);
    shape_ = hier::shape_of(run);
    for (Level level : {Level::node, Level::across}) level_of(level).open(ctx, run, level);
    label_.clear();
    for (const auto& l : levels_) {  // "p2p+net/tcp": the node's path, then the path across
      if (!l.ring() || l.ring()->transport() == label_) continue;
      if (!label_.empty()) label_ += '+';
      label_ += l.ring()->transport();
    }
    if (label_.empty()) label_ = name(Transport::p2p);  // one rank: nothing to connect, as the ring says
  }
  void attach(const BufferSet& b) override {
    for (Implementation* r : rings()) r->attach(b);
    // Only the all-gather on several nodes of several ranks reorders through scratch: its N x L
    // blocks, at most the receive buffer. Other series allocate none.
    if (b.coll != Collective::allgather || hier::scratch_elements(Collective::allgather, 1, shape_) == 0) return;
    void* p = nullptr;
    const cudaError_t rc = cudaMalloc(&p, std::max<std::size_t>(b.recv_bytes, 1));
    if (rc == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      fail(ExitCode::precondition, "hier: out of GPU memory allocating the all-gather's {} B scratch buffer",
           b.recv_bytes);
    }
    CCB_CUDA(rc);
    scratch_.reset(p);
    scratch_bytes_ = b.recv_bytes;
  }
  void detach() override {
    for (Implementation* r : rings()) r->detach();
    scratch_.reset();
    scratch_bytes_ = 0;
  }
  void run(const CallArgs& a) override {
    const std::size_t esz = element_size(a.spec.dtype);
    for (const hier::Step& st : hier::plan(a.spec.coll, a.count, shape_)) {
      if (st.kind == hier::Step::Kind::copy) copy(a, st, esz);
      else ring_of(st.level).run(step_args(a, st, esz));
    }
  }
  void check_async_errors() override {
    for (Level level : {Level::node, Level::across}) level_of(level).check_async_errors(level);
  }
  std::string transport() const override { return label_; }
  bool graph_capturable() const override { return true; }
  // "reducescatter/node ring 2ch > allreduce/across ring 1ch > allgather/node ring 2ch".
  std::string describe(const CallArgs& a) override {
    const std::size_t esz = element_size(a.spec.dtype);
    std::vector<std::string> parts;
    for (const hier::Step& st : hier::plan(a.spec.coll, a.count, shape_)) {
      std::string part = st.kind == hier::Step::Kind::copy
                             ? (st.height > 1 ? "reorder" : "copy (1 rank)")
                             : fmt::format("{}/{} {}", name(st.coll), hier::name(st.level),
                                           ring_of(st.level).describe(step_args(a, st, esz)));
      if (parts.empty() || parts.back() != part) parts.push_back(std::move(part));
    }
    return fmt::format("{}", fmt::join(parts, " > "));
  }

 private:
  struct CudaFree {
    void operator()(void* p) const { cudaFree(p); }
  };
  LevelRing& level_of(Level level) { return levels_[level == Level::node ? 0 : 1]; }
  Implementation& ring_of(Level level) {
    Implementation* r = level_of(level).ring();
    if (!r) fail(ExitCode::runtime, "hier: no ring {} (one rank there)", where(level));
    return *r;
  }
  std::vector<Implementation*> rings() const {
    std::vector<Implementation*> out;
    for (const auto& l : levels_)
      if (l.ring()) out.push_back(l.ring());
    return out;
  }
  char* address(const CallArgs& a, hier::Region r, std::size_t esz, std::size_t len) const {
    char* base = r.buffer == hier::Buffer::recv   ? static_cast<char*>(a.recv)
                 : r.buffer == hier::Buffer::send ? const_cast<char*>(static_cast<const char*>(a.send))
                                                  : static_cast<char*>(scratch_.get());
    if (r.buffer == hier::Buffer::scratch && (r.offset + len) * esz > scratch_bytes_)
      fail(ExitCode::runtime, "hier: {} B of scratch needed, {} B attached", (r.offset + len) * esz, scratch_bytes_);
    return base + r.offset * esz;
  }
  CallArgs step_args(const CallArgs& a, const hier::Step& st, std::size_t esz) const {
    const std::size_t ranks = static_cast<std::size_t>(st.level == Level::node ? shape_.local_ranks : shape_.nodes);
    CallArgs c = a;
    c.spec.coll = st.coll;
    if (st.partial && a.spec.op == ReduceOp::avg) c.spec.op = ReduceOp::sum;
    c.send = address(a, st.from, esz, st.coll == Collective::reducescatter ? ranks * st.count : st.count);
    c.recv = address(a, st.to, esz, st.coll == Collective::allgather ? ranks * st.count : st.count);
    c.count = st.count;
    return c;
  }
  void copy(const CallArgs& a, const hier::Step& st, std::size_t esz) const {
    const char* from = address(a, st.from, esz, (st.height - 1) * st.src_pitch + st.width);
    char* to = address(a, st.to, esz, (st.height - 1) * st.dst_pitch + st.width);
    if (st.height == 1) {
      if (from != to) CCB_CUDA(cudaMemcpyAsync(to, from, st.width * esz, cudaMemcpyDeviceToDevice, stream_));
      return;
    }
    CCB_CUDA(cudaMemcpy2DAsync(to, st.dst_pitch * esz, from, st.src_pitch * esz, st.width * esz, st.height,
                               cudaMemcpyDeviceToDevice, stream_));
  }

  std::array<LevelRing, 2> levels_;  // node, across
  hier::Shape shape_;
  std::string label_ = "-";
  std::string refusal_;  // set up nothing: why, on every rank
  cudaStream_t stream_ = nullptr;
  std::size_t max_pitch_ = 0;
  std::unique_ptr<void, CudaFree> scratch_;
  std::size_t scratch_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Implementation> make_hier_gpu() { return std::make_unique<HierGpu>(); }

}  // namespace ccbench
