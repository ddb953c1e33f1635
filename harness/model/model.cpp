#include "harness/model/model.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "collectives/schedules/ring.h"
#include "collectives/schedules/tree.h"
#include "core/error.h"
#include "core/knob_table.h"

namespace ccbench {

namespace {

// Chunk of the pipelined tree: our GPU FIFO slot (CCBENCH_GPU_SLOT_BYTES' default).
constexpr double kTreeChunkBytes = knob_default<double>(Knob::gpu_slot_bytes);
// Slice of the CPU executors' pipelined chains (CCBENCH_CPU_SLOT_BYTES' default).
constexpr double kCpuSliceBytes = knob_default<double>(Knob::cpu_slot_bytes);
// GB/s to bytes per microsecond.
constexpr double kBytesPerUsPerGbps = 1e3;

// The links of a system, each one direction of one physical link, with its capacity.
class LinkGraph {
 public:
  explicit LinkGraph(const SystemTopology& t) : t_(t), g_(t.node.ranks) {
    const NodeSpec& n = t.node;
    switches_ = n.fabric == IntraFabric::pcie ? (g_ + n.gpus_per_switch - 1) / n.gpus_per_switch : 0;
    add(2 * t.ranks(), n.gpu_link.bandwidth_gbps);  // ports: out 2r, in 2r+1
    mesh_ = count();
    if (n.fabric == IntraFabric::nvlink_mesh && g_ > 1) add(t.nodes * g_ * g_, n.gpu_link.bandwidth_gbps / (g_ - 1));
    switch_ = count();
    add(2 * t.nodes * switches_, n.switch_uplink.bandwidth_gbps);
    nic_ = count();
    add(2 * t.nodes * n.nics, n.nic.bandwidth_gbps);
    uplink_ = count();
    add(2 * t.nodes, n.nics * n.nic.bandwidth_gbps / t.oversubscription);
  }

  int count() const { return static_cast<int>(capacity_.size()); }
  double capacity(int link) const { return capacity_[static_cast<size_t>(link)]; }

  // The links a transfer from rank a to rank b crosses, and its latency.
  double path(int a, int b, std::vector<int>& links) const {
    links.clear();
    const NodeSpec& n = t_.node;
    const int na = a / g_, nb = b / g_, la = a % g_, lb = b % g_;
    if (na != nb) {
      const int nic_a = la * n.nics / g_, nic_b = lb * n.nics / g_;
      links.push_back(nic_ + 2 * (na * n.nics + nic_a));
      links.push_back(nic_ + 2 * (nb * n.nics + nic_b) + 1);
      if (t_.oversubscription > 1) {
        links.push_back(uplink_ + 2 * na);
        links.push_back(uplink_ + 2 * nb + 1);
      }
      return 2 * n.nic.latency_us + t_.fabric_latency_us;
    }
    if (n.fabric == IntraFabric::nvlink_mesh) {
      links.push_back(mesh_ + na * g_ * g_ + la * g_ + lb);
      return n.gpu_link.latency_us;
    }
    links.push_back(2 * a);
    links.push_back(2 * b + 1);
    double latency = n.gpu_link.latency_us;
    if (switches_ > 0 && la / n.gpus_per_switch != lb / n.gpus_per_switch) {
      links.push_back(switch_ + 2 * (na * switches_ + la / n.gpus_per_switch));
      links.push_back(switch_ + 2 * (na * switches_ + lb / n.gpus_per_switch) + 1);
      latency += 2 * n.switch_uplink.latency_us;
    }
    return latency;
  }

 private:
  void add(int links, double gbps) { capacity_.insert(capacity_.end(), static_cast<size_t>(links), gbps); }

  const SystemTopology& t_;
  int g_;
  int switches_ = 0;
  int mesh_ = 0, switch_ = 0, nic_ = 0, uplink_ = 0;
  std::vector<double> capacity_;
};

// One transfer of a step: `blocks` units of data from src to dst.
struct Flow {
  int src, dst;
  double blocks = 1;
};

// What a step costs for a unit of u bytes: max over terms of (latency + u * us_per_byte).
struct StepCost {
  std::vector<std::pair<double, double>> terms;  // (latency us, us per unit byte), no term dominated
  double count = 1;                              // how many steps of the phase cost this
  bool waits = true;                             // false: nobody waits for data (a kernel's first send)
  // `loops`: the step runs once per loop on unit/loops, its receivers waiting every time.
  double time(double unit, double loops = 1) const {
    double t = 0;
    for (const auto& [lat, k] : terms) t = std::max(t, (waits ? loops : 0) * lat + unit * k);
    return t;
  }
  double latency() const {
    double t = 0;
    for (const auto& term : terms) t = std::max(t, term.first);
    return t;
  }
  double transfer(double unit) const {
    double t = 0;
    for (const auto& term : terms) t = std::max(t, unit * term.second);
    return t;
  }
};

// Costs the flows of one step: flows sharing a link share it equally; a flow moves at most
// cap_gbps (0: no cap).
StepCost cost_step(const LinkGraph& graph, const std::vector<Flow>& flows, double cap_gbps = 0) {
  std::vector<int> uses(static_cast<size_t>(graph.count()), 0);
  std::vector<std::vector<int>> paths(flows.size());
  std::vector<double> latency(flows.size());
  for (size_t i = 0; i < flows.size(); ++i) {
    latency[i] = graph.path(flows[i].src, flows[i].dst, paths[i]);
    for (int l : paths[i]) ++uses[static_cast<size_t>(l)];
  }
  StepCost c;
  for (size_t i = 0; i < flows.size(); ++i) {
    double rate = INFINITY;  // GB/s this flow gets at its narrowest link
    for (int l : paths[i]) rate = std::min(rate, graph.capacity(l) / uses[static_cast<size_t>(l)]);
    if (cap_gbps > 0) rate = std::min(rate, cap_gbps);
    const double k = flows[i].blocks / (rate * kBytesPerUsPerGbps);
    c.terms.emplace_back(latency[i], k);
  }
  // Keep only the terms that can be the maximum for some unit size.
  std::sort(c.terms.begin(), c.terms.end(),
            [](auto& x, auto& y) { return x.first > y.first || (x.first == y.first && x.second > y.second); });
  std::vector<std::pair<double, double>> kept;
  for (const auto& t : c.terms)
    if (kept.empty() || t.second > kept.back().second) kept.push_back(t);
  c.terms = std::move(kept);
  return c;
}

// A step that only copies in the GPU's own memory what `arrivals` delivered: it waits for their
// latency, then copies the unit at copy_gbps.
StepCost local_step(const LinkGraph& graph, const std::vector<Flow>& arrivals, double copy_gbps) {
  StepCost c;
  double latency = 0;
  std::vector<int> links;
  for (const Flow& f : arrivals) latency = std::max(latency, graph.path(f.src, f.dst, links));
  c.terms.emplace_back(latency, 1 / (copy_gbps * kBytesPerUsPerGbps));
  return c;
}

// The largest flow cap of a kernel's flows (one flow carries all its channels); 0: none.
double flow_cap(const KernelPipeline& k) { return k.channels > 0 && k.block_gbps > 0 ? k.channels * k.block_gbps : 0; }

// A part of an algorithm: steps whose unit of data is `share` of the size S.
struct Phase {
  double share = 1;
  std::vector<StepCost> steps;
  // Pipelined (tree): one steady-state round repeated once per chunk of the unit, plus the rounds
  // that fill and drain the pipeline.
  bool pipelined = false;
  int fill_rounds = 0;
  double chunk_bytes = kTreeChunkBytes;
  // Chunks of chunk_bytes, the last one shorter (the CPU executors' slices), instead of the unit
  // split into equal chunks.
  bool fixed_chunks = false;
  // Our kernels (KernelPipeline): the unit moves in loops of at most loop_bytes (every channel a
  // slot); 0: in one piece.
  double loop_bytes = 0;
  // A pipeline of kernel slots over `stages` stages: windows[a * stages + b] is a round in which
  // the stages a..b move a slot, drain the local copy after the last round.
  int stages = 0;
  std::vector<StepCost> windows;
  StepCost drain;

  double loops(double data) const { return loop_bytes > 0 ? std::max(1.0, std::ceil(data / loop_bytes)) : 1; }

  // Round r moves slot r - s over stage s: the stages of slots 0..loops-1 that are under way. A
  // stage waits for its first slot only (later ones arrive while it works on the one before).
  double slot_pipeline_time(double data) const {
    const double n = loops(data), unit = data / n;
    const double full = std::max(0.0, n - stages + 1);  // rounds with every stage busy
    const auto round = [&](double r) {
      const int a = static_cast<int>(std::max(0.0, r - n + 1)), b = static_cast<int>(std::min<double>(stages - 1, r));
      return windows[static_cast<size_t>(a * stages + b)].transfer(unit);
    };
    double t = drain.time(unit) + stages * windows[static_cast<size_t>(stages - 1)].latency();
    if (full == 0) {  // fewer slots than stages: every round is part of the fill or the drain
      for (double r = 0; r < n + stages - 1; ++r) t += round(r);
      return t;
    }
    t += full * round(stages - 1);
    for (int i = 0; i < stages - 1; ++i) t += round(i) + round(n + i);  // fill, drain
    return t;
  }

  double time(double bytes) const {
    const double data = bytes * share;
    if (stages > 0) return slot_pipeline_time(data);
    if (!pipelined) {
      double t = 0;
      for (const StepCost& s : steps) t += s.count * s.time(data, loops(data));
      return t;
    }
    // Chunks stream through the pipeline: its latency is paid once per hop of the fill, while
    // every round (one per chunk, plus the fill) moves a chunk over the busiest link.
    const StepCost& round = steps.front();
    if (fixed_chunks)  // the busiest hop moves all the data; the fill costs a chunk per round
      return (fill_rounds + 1) * round.latency() + round.transfer(data) +
             fill_rounds * round.transfer(std::min(data, chunk_bytes));
    const double chunks = std::max(1.0, std::ceil(data / chunk_bytes));
    return (fill_rounds + 1) * round.latency() + (chunks + fill_rounds) * round.transfer(data / chunks);
  }
};

enum class RingKind { allreduce, reducescatter, allgather };

// Rings (lists of ranks, all of one length) running one ring schedule in lock step; each ring
// carries `share` of S in every step.
// With a kernel, each ring is its channels: loops of one slot per channel; a step where no position
// receives (the first send of a loop) waits for nobody, one where no position sends (the last copy
// of a loop) is a local copy.
Phase ring_phase(const LinkGraph& graph, const std::vector<std::vector<int>>& rings, RingKind kind, double share,
                 const KernelPipeline& kernel = {}) {
  Phase ph;
  ph.share = share;
  const bool channels = kernel.channels > 0;
  if (channels) ph.loop_bytes = kernel.channels * kernel.slot_bytes;
  const int n = static_cast<int>(rings.front().size());
  if (n < 2) return ph;
  const int steps = kind == RingKind::allreduce   ? schedule::ring_allreduce_steps(n)
                    : kind == RingKind::allgather ? schedule::ring_allgather_steps(n)
                                                  : schedule::ring_reducescatter_steps(n);
  std::map<std::vector<bool>, size_t> classes;  // which positions send, whether any receives -> index in ph.steps
  for (int s = 0; s < steps; ++s) {
    std::vector<bool> senders(static_cast<size_t>(n));
    bool any = false, receives = false;
    for (int pos = 0; pos < n; ++pos) {
      const schedule::RingStep st = kind == RingKind::allreduce   ? schedule::ring_allreduce_step(n, pos, s)
                                    : kind == RingKind::allgather ? schedule::ring_allgather_step(n, pos, s)
                                                                  : schedule::ring_reducescatter_step(n, pos, s);
      senders[static_cast<size_t>(pos)] = schedule::ring_op_sends(st.op);
      any = any || schedule::ring_op_sends(st.op);
      receives = receives || schedule::ring_op_receives(st.op);
    }
    senders.push_back(receives);
    if (!any && !channels) continue;
    auto [it, fresh] = classes.try_emplace(senders, ph.steps.size());
    if (!fresh) {
      ph.steps[it->second].count += 1;
      continue;
    }
    std::vector<Flow> flows;
    for (const auto& ring : rings)
      for (int pos = 0; pos < n; ++pos)
        if (senders[static_cast<size_t>(pos)] || !any)  // a copy step: what every position received
          flows.push_back({ring[static_cast<size_t>(pos)], ring[static_cast<size_t>((pos + 1) % n)]});
    ph.steps.push_back(any ? cost_step(graph, flows, flow_cap(kernel))
                           : local_step(graph, flows, kernel.local_copy_gbps));
    ph.steps.back().waits = receives || !channels;
  }
  return ph;
}

int depth_of(const std::vector<int>& parent, int r) {
  int d = 0;
  for (int x = r; parent[static_cast<size_t>(x)] >= 0; x = parent[static_cast<size_t>(x)]) ++d;
  return d;
}

// The trees as our kernel runs them (KernelPipeline): every channel a pipeline of slots. In tree t
// of depth D, the edge above a rank at depth d is stage D - d going up and stage D + d - 1 coming
// down; each stage window's flows are costed together (both trees share the links).
Phase kernel_tree_phase(const LinkGraph& graph, const std::vector<std::vector<int>>& parents, const KernelPipeline& k) {
  Phase ph;
  ph.share = 1.0 / static_cast<double>(parents.size());
  ph.loop_bytes = k.channels * k.slot_bytes;
  struct Staged {
    Flow flow;
    int stage;
  };
  std::vector<Staged> edges;
  std::vector<Flow> down;
  for (const auto& parent : parents) {
    int depth = 0;
    for (size_t r = 0; r < parent.size(); ++r) depth = std::max(depth, depth_of(parent, static_cast<int>(r)));
    for (size_t r = 0; r < parent.size(); ++r) {
      if (parent[r] < 0) continue;
      const int rank = static_cast<int>(r), d = depth_of(parent, rank);
      edges.push_back({{rank, parent[r]}, depth - d});
      edges.push_back({{parent[r], rank}, depth + d - 1});
      down.push_back({parent[r], rank});
    }
    ph.stages = std::max(ph.stages, 2 * depth);
  }
  if (edges.empty()) return Phase{};
  ph.windows.resize(static_cast<size_t>(ph.stages * ph.stages));
  for (int a = 0; a < ph.stages; ++a)
    for (int b = a; b < ph.stages; ++b) {
      std::vector<Flow> flows;
      for (const Staged& e : edges)
        if (e.stage >= a && e.stage <= b) flows.push_back(e.flow);
      if (!flows.empty()) ph.windows[static_cast<size_t>(a * ph.stages + b)] = cost_step(graph, flows, flow_cap(k));
    }
  ph.drain = local_step(graph, down, k.local_copy_gbps);  // the last slot, out of the down FIFO
  return ph;
}

// Pipelined trees given as parent arrays (-1 at the root); each carries an equal part of S, and
// in the steady state every edge carries one chunk up (reduce) and one down (broadcast) per round.
Phase tree_phase(const LinkGraph& graph, const std::vector<std::vector<int>>& parents) {
  Phase ph;
  ph.share = 1.0 / static_cast<double>(parents.size());
  ph.pipelined = true;
  std::vector<Flow> flows;
  int depth = 0;
  for (const auto& parent : parents) {
    for (size_t r = 0; r < parent.size(); ++r) {
      if (parent[r] < 0) continue;
      flows.push_back({static_cast<int>(r), parent[r]});
      flows.push_back({parent[r], static_cast<int>(r)});
      depth = std::max(depth, depth_of(parent, static_cast<int>(r)));
    }
  }
  ph.fill_rounds = std::max(0, 2 * depth - 1);
  if (!flows.empty()) ph.steps.push_back(cost_step(graph, flows));
  else ph.pipelined = false;
  return ph;
}

std::vector<int> rank_order(int first, int count, int stride) {
  std::vector<int> r(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) r[static_cast<size_t>(i)] = first + i * stride;
  return r;
}

// One ring per NIC (at least one), each visiting the nodes in order and the ranks of a node in
// local order rotated so that ring c enters every node at the first rank of NIC c's rail: every
// ring enters and leaves a node through NICs no other ring uses in that direction.
std::vector<std::vector<int>> rail_rings(const SystemTopology& t) {
  const int g = t.node.ranks, rings = t.nodes > 1 ? std::max(1, std::min(t.node.nics, g)) : 1;
  std::vector<std::vector<int>> out;
  for (int c = 0; c < rings; ++c) {
    std::vector<int> ring;
    for (int node = 0; node < t.nodes; ++node)
      for (int i = 0; i < g; ++i) ring.push_back(node * g + (i + c * g / rings) % g);
    out.push_back(std::move(ring));
  }
  return out;
}

std::vector<std::vector<int>> double_binary_trees(int n) {
  std::vector<std::vector<int>> trees(2, std::vector<int>(static_cast<size_t>(n)));
  for (int which = 0; which < 2; ++which)
    for (int r = 0; r < n; ++r)
      trees[static_cast<size_t>(which)][static_cast<size_t>(r)] = schedule::double_tree(n, r, which).parent;
  return trees;
}

// NCCL's tree: per channel (one per NIC, at least one) a double binary tree over the nodes, entered
// at the channel's rank of each node, and below it a chain through the node's other ranks.
std::vector<std::vector<int>> chain_trees(const SystemTopology& t) {
  const int g = t.node.ranks, channels = t.nodes > 1 ? std::max(1, std::min(t.node.nics, g)) : 1;
  std::vector<std::vector<int>> trees;
  for (int c = 0; c < channels; ++c)
    for (int which = 0; which < 2; ++which) {
      std::vector<int> parent(static_cast<size_t>(t.ranks()));
      for (int node = 0; node < t.nodes; ++node) {
        const int up = schedule::double_tree(t.nodes, node, which).parent;
        const int entry = c * g / channels;  // the first rank of NIC c's rail
        for (int i = 0; i < g; ++i) {        // i-th rank of the chain
          const int r = node * g + (entry + i) % g;
          parent[static_cast<size_t>(r)] = i > 0 ? node * g + (entry + i - 1) % g : (up < 0 ? -1 : up * g + entry);
        }
      }
      trees.push_back(std::move(parent));
    }
  return trees;
}

// Every rank sends `blocks` units to every other rank, in `steps` identical steps.
Phase direct_phase(const LinkGraph& graph, int n, double share, int steps) {
  std::vector<Flow> flows;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) flows.push_back({a, b});
  Phase ph;
  ph.share = share;
  ph.steps.push_back(cost_step(graph, flows));
  ph.steps.back().count = steps;
  return ph;
}

// With a kernel: its blocks cap every flow, and out of place a local copy of the own piece first.
Phase bruck_phase(const LinkGraph& graph, int n, const KernelPipeline& kernel = {}) {
  Phase ph;
  ph.share = 1.0 / n;
  if (kernel.channels > 0 && !kernel.in_place) {
    ph.steps.emplace_back();
    ph.steps.back().terms.emplace_back(0.0, 1 / (kernel.local_copy_gbps * kBytesPerUsPerGbps));
  }
  for (int k = 0; k < schedule::bruck_rounds(n); ++k) {
    std::vector<Flow> flows;
    for (int r = 0; r < n; ++r) {
      const schedule::BruckRound br = schedule::bruck_round(n, r, k);
      flows.push_back({r, br.send_to, static_cast<double>(br.blocks)});
    }
    ph.steps.push_back(cost_step(graph, flows, flow_cap(kernel)));
  }
  return ph;
}

// Hierarchical: rings inside nodes and rings across nodes of the ranks with the same local index.
std::vector<Phase> hier_phases(const LinkGraph& graph, const SystemTopology& t, Collective coll) {
  const int g = t.node.ranks, nodes = t.nodes;
  std::vector<std::vector<int>> intra, inter;
  for (int node = 0; node < nodes; ++node) intra.push_back(rank_order(node * g, g, 1));
  for (int l = 0; l < g; ++l) inter.push_back(rank_order(l, nodes, g));
  std::vector<Phase> out;
  if (coll == Collective::allreduce) {
    if (g > 1) out.push_back(ring_phase(graph, intra, RingKind::reducescatter, 1.0 / g));
    if (nodes > 1) out.push_back(ring_phase(graph, inter, RingKind::allreduce, 1.0 / (g * nodes)));
    if (g > 1) out.push_back(ring_phase(graph, intra, RingKind::allgather, 1.0 / g));
  } else {
    if (nodes > 1) out.push_back(ring_phase(graph, inter, RingKind::allgather, 1.0 / (g * nodes)));
    if (g > 1) out.push_back(ring_phase(graph, intra, RingKind::allgather, 1.0 / g));
  }
  return out;
}

// Pipelined chains (lists of ranks, all of one length), all at once: every chunk of S goes down
// each chain hop by hop, every hop busy once the pipeline is full.
Phase chain_phase(const LinkGraph& graph, const std::vector<std::vector<int>>& chains) {
  Phase ph;
  ph.pipelined = true;
  ph.fixed_chunks = true;
  ph.chunk_bytes = kCpuSliceBytes;
  const int hops = static_cast<int>(chains.front().size()) - 1;
  ph.fill_rounds = hops - 1;
  std::vector<Flow> flows;
  for (const auto& chain : chains)
    for (int h = 0; h < hops; ++h) flows.push_back({chain[static_cast<size_t>(h)], chain[static_cast<size_t>(h + 1)]});
  ph.steps.push_back(cost_step(graph, flows));
  return ph;
}

// The leader scheme of CPU hier (collectives/cpu/hier.cpp), one stage after the other: a chain
// reduce in every node from local rank 1 on to the leader (local rank 0), a ring all-reduce of the
// leaders across nodes (all of it through the leader's NIC), a chain broadcast from the leader.
std::vector<Phase> leader_phases(const LinkGraph& graph, const SystemTopology& t) {
  const int g = t.node.ranks, nodes = t.nodes;
  std::vector<std::vector<int>> to_leader, from_leader;
  for (int node = 0; node < nodes; ++node) {
    from_leader.push_back(rank_order(node * g, g, 1));
    to_leader.push_back(rank_order(node * g + 1, g - 1, 1));
    to_leader.back().push_back(node * g);
  }
  std::vector<Phase> out;
  if (g > 1) out.push_back(chain_phase(graph, to_leader));
  if (nodes > 1) out.push_back(ring_phase(graph, {rank_order(0, nodes, g)}, RingKind::allreduce, 1.0 / nodes));
  if (g > 1) out.push_back(chain_phase(graph, from_leader));
  return out;
}

RingKind ring_kind(Collective c) {
  return c == Collective::allreduce   ? RingKind::allreduce
         : c == Collective::allgather ? RingKind::allgather
                                      : RingKind::reducescatter;
}

}  // namespace

const std::vector<std::string>& model_algorithms() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (ModelSchedule s : all_model_schedules()) out.push_back(name(s));
    return out;
  }();
  return names;
}

struct CollectiveModel::Plan {
  Collective coll;
  int ranks = 0;
  std::string unsupported;
  std::vector<Phase> phases;
};

namespace {

ModelSchedule parse_algorithm(const std::string& algo) {
  if (const auto s = parse_model_schedule(algo)) return *s;
  fail(ExitCode::usage, "model: unknown algorithm '{}'; valid: {}", algo, fmt::join(model_algorithms(), ", "));
}

// The phases of `algo` for `coll` on `graph`; false where the algorithm does not implement `coll`.
bool plan_phases(std::vector<Phase>& phases, const LinkGraph& graph, const SystemTopology& t, Collective coll,
                 ModelSchedule algo, const KernelPipeline& kernel) {
  const int n = t.ranks();
  const bool allreduce = coll == Collective::allreduce;
  const bool slots = kernel.channels > 0 && kernel.slot_bytes > 0;  // a FIFO kernel
  switch (algo) {
    case ModelSchedule::ring:
    case ModelSchedule::nccl_ring: {
      auto rings = rail_rings(t);
      const double ring_share = 1.0 / (static_cast<double>(n) * static_cast<double>(rings.size()));
      phases.push_back(ring_phase(graph, rings, ring_kind(coll), ring_share,
                                  algo == ModelSchedule::ring ? kernel : KernelPipeline{}));
      return true;
    }
    case ModelSchedule::tree:
      if (allreduce)
        phases.push_back(slots ? kernel_tree_phase(graph, double_binary_trees(n), kernel)
                               : tree_phase(graph, double_binary_trees(n)));
      else if (coll == Collective::allgather) phases.push_back(bruck_phase(graph, n, kernel));
      return allreduce || coll == Collective::allgather;
    case ModelSchedule::nccl_tree:
      if (allreduce) phases.push_back(tree_phase(graph, chain_trees(t)));
      return allreduce;
    case ModelSchedule::hier:
      if (coll != Collective::reducescatter) phases = hier_phases(graph, t, coll);
      return coll != Collective::reducescatter;
    case ModelSchedule::hier_leader:
      if (allreduce) phases = leader_phases(graph, t);
      return allreduce;
    case ModelSchedule::oneshot:
      if (allreduce) phases.push_back(direct_phase(graph, n, 1.0, 1));
      return allreduce;
    case ModelSchedule::twoshot:
      if (allreduce) phases.push_back(direct_phase(graph, n, 1.0 / n, 2));
      return allreduce;
  }
  return false;
}

}  // namespace

CollectiveModel::CollectiveModel(const SystemTopology& t, Collective coll, const std::string& algo,
                                 const KernelPipeline& kernel)
    : CollectiveModel(t, coll, parse_algorithm(algo), kernel) {}

CollectiveModel::CollectiveModel(const SystemTopology& t, Collective coll, ModelSchedule algo,
                                 const KernelPipeline& kernel)
    : plan_(std::make_unique<Plan>()) {
  if (kernel.channels > 0 && !(kernel.local_copy_gbps > 0))
    fail(ExitCode::usage, "model: a kernel of {} channels needs its local copy rate (> 0 GB/s)", kernel.channels);
  Plan& p = *plan_;
  p.coll = coll;
  p.ranks = t.ranks();
  const bool movement =
      coll == Collective::allreduce || coll == Collective::allgather || coll == Collective::reducescatter;
  if (!movement) {
    p.unsupported = fmt::format("the model covers allreduce, allgather and reducescatter, not {}", name(coll));
    return;
  }
  if (p.ranks < 2) {
    p.unsupported = "a single rank moves no data";
    return;
  }
  const LinkGraph graph(t);
  const bool slots = kernel.channels > 0 && kernel.slot_bytes > 0;  // a FIFO kernel
  if (kernel.channels > 0 && algo != ModelSchedule::tree && !slots)
    fail(ExitCode::usage, "model: a {} kernel needs its slot size (> 0 bytes)", name(algo));
  if (!plan_phases(p.phases, graph, t, coll, algo, kernel)) {
    // hier and tree implement allgather besides allreduce (ring all three); the others allreduce only.
    const bool two = algo == ModelSchedule::hier || algo == ModelSchedule::tree;
    p.unsupported = fmt::format("{} implements {}", name(algo), two ? "allreduce and allgather" : "allreduce only");
  }
}

CollectiveModel::~CollectiveModel() = default;
CollectiveModel::CollectiveModel(CollectiveModel&&) noexcept = default;

Prediction CollectiveModel::predict(std::uint64_t bytes) const {
  const Plan& p = *plan_;
  Prediction out;
  out.unsupported = p.unsupported;
  if (!p.unsupported.empty() || bytes == 0) return out;
  for (const Phase& ph : p.phases) out.time_us += ph.time(static_cast<double>(bytes));
  out.algbw_gbps = static_cast<double>(bytes) / (out.time_us * kBytesPerUsPerGbps);
  out.busbw_gbps = out.algbw_gbps * bus_factor(p.coll, p.ranks);
  return out;
}

}  // namespace ccbench
