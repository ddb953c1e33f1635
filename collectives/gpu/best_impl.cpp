// best: the fastest of our kernels for each collective and size (thresholds in knobs.h); ce is the
// only one for all-to-all, alltoallv, gather and scatter. Reduce is the ring's chain at every size:
// on 2 x H200 its batch time is at or below oneshot's from 8 B (5.6 against 7.9 us) to 32 MiB
// (96.9 against 100.3 us) and within 0.5 % above at 128 and 512 MiB (h200x2-20261130-r6): the
// root's direct reads finish no sooner, and the non-root waits for them.
#include "collectives/gpu/gpu_impls.h"
#include "collectives/gpu/knobs.h"

namespace ccbench {

namespace {

using namespace gpu;

class BestGpu final : public Implementation {
 public:
  BestGpu()
      : oneshot_(make_oneshot_gpu()), twoshot_(make_twoshot_gpu()), ring_(make_ring_gpu()), tree_(make_tree_gpu()),
        ce_(make_ce_gpu()) {}
  CollectiveSet collectives() const override {
    return {Collective::allreduce, Collective::allgather, Collective::reducescatter, Collective::alltoall,
            Collective::alltoallv, Collective::gather,    Collective::scatter,       Collective::reduce};
  }
  std::optional<std::string> unsupported(const CaseSpec& s, const ImplContext& ctx) const override {
    if (s.coll == Collective::allreduce) return twoshot_->unsupported(s, ctx);
    if (s.coll == Collective::allgather) return ce_->unsupported(s, ctx);
    if (s.coll == Collective::reducescatter) return ring_->unsupported(s, ctx);
    if (s.coll == Collective::reduce) return ring_->unsupported(s, ctx);
    return ce_->unsupported(s, ctx);  // alltoall, alltoallv, gather, scatter: only ce has them
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
  std::string transport() const override { return ring_->transport(); }
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
    if (a.spec.coll == Collective::reducescatter || a.spec.coll == Collective::reduce) return *ring_;
    return *ce_;
  }
  std::vector<Implementation*> all() const {
    return {oneshot_.get(), twoshot_.get(), ring_.get(), tree_.get(), ce_.get()};
  }
  std::unique_ptr<Implementation> oneshot_, twoshot_, ring_, tree_, ce_;
  std::size_t oneshot_max_ = 0, twoshot_max_ = 0, bruck_max_ = 0, ring_allgather_max_ = 0;
};

}  // namespace

std::unique_ptr<Implementation> make_best_gpu() { return std::make_unique<BestGpu>(); }

}  // namespace ccbench
