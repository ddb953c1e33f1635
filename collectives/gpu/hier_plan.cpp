#include "collectives/gpu/hier_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace ccbench::hier {

namespace {

Step ring(Level level, Collective coll, Region from, Region to, std::size_t count, bool partial = false) {
  return {.kind = Step::Kind::ring,
          .level = level,
          .coll = coll,
          .partial = partial,
          .from = from,
          .to = to,
          .count = count};
}

Step copy(Region from, Region to, std::size_t width, std::size_t height, std::size_t src_pitch, std::size_t dst_pitch) {
  return {.kind = Step::Kind::copy,
          .from = from,
          .to = to,
          .width = width,
          .height = height,
          .src_pitch = src_pitch,
          .dst_pitch = dst_pitch};
}

std::vector<Step> plan_allreduce(std::size_t count, const Shape& s) {
  const std::size_t l = static_cast<std::size_t>(s.local_ranks);
  if (l == 1) return {ring(Level::across, Collective::allreduce, {Buffer::send, 0}, {Buffer::recv, 0}, count)};
  const std::size_t q = count / l, head = q * l;
  const Region share{Buffer::recv, static_cast<std::size_t>(s.local) * q};
  const bool partial = s.nodes > 1;  // the sum completes across the nodes
  std::vector<Step> out;
  if (q > 0) {
    out.push_back(ring(Level::node, Collective::reducescatter, {Buffer::send, 0}, share, q, partial));
    if (s.nodes > 1) out.push_back(ring(Level::across, Collective::allreduce, share, share, q));
    out.push_back(ring(Level::node, Collective::allgather, share, {Buffer::recv, 0}, q));
  }
  if (head < count) {  // the remainder: fewer elements than ranks in a node
    const Region tail{Buffer::recv, head};
    out.push_back(ring(Level::node, Collective::allreduce, {Buffer::send, head}, tail, count - head, partial));
    if (s.nodes > 1) out.push_back(ring(Level::across, Collective::allreduce, tail, tail, count - head));
  }
  return out;
}

std::vector<Step> plan_allgather(std::size_t count, const Shape& s) {
  if (s.nodes == 1) return {ring(Level::node, Collective::allgather, {Buffer::send, 0}, {Buffer::recv, 0}, count)};
  if (s.local_ranks == 1)
    return {ring(Level::across, Collective::allgather, {Buffer::send, 0}, {Buffer::recv, 0}, count)};
  const std::size_t n = static_cast<std::size_t>(s.nodes), l = static_cast<std::size_t>(s.local_ranks);
  const Region mine{Buffer::scratch, static_cast<std::size_t>(s.local) * n * count};  // blocks (j, 0..N-1)
  std::vector<Step> out = {ring(Level::across, Collective::allgather, {Buffer::send, 0}, mine, count),
                           ring(Level::node, Collective::allgather, mine, {Buffer::scratch, 0}, n * count)};
  // Block (j, k) from scratch (j * N + k) * C to rank k * L + j's place: one strided copy per j.
  for (std::size_t j = 0; j < l; ++j)
    out.push_back(copy({Buffer::scratch, j * n * count}, {Buffer::recv, j * count}, count, n, count, l * count));
  return out;
}

}  // namespace

Shape shape_of(const RankLayout& layout) {
  Shape s;
  s.nodes = layout.nodes;
  s.local_ranks = layout.max_ranks_per_node();
  s.node = layout.node();
  s.local = layout.local_rank();
  return s;
}

std::optional<std::string> layout_problem(const RankLayout& layout, Collective coll) {
  const int l = layout.max_ranks_per_node();
  if (layout.nodes * l != layout.nranks) {
    std::map<int, int> per_node;
    for (int v : layout.node_of) ++per_node[v];
    std::vector<std::string> sizes;
    for (const auto& [node, ranks] : per_node) sizes.push_back(std::to_string(ranks));
    return fmt::format("hier needs the same number of ranks on every node (ranks per node here: {})",
                       fmt::join(sizes, ", "));
  }
  if (coll != Collective::allgather || layout.nodes == 1 || l == 1) return std::nullopt;
  for (int r = 0; r < layout.nranks; ++r)
    if (r != layout.node_of[static_cast<std::size_t>(r)] * l + layout.local_rank_of[static_cast<std::size_t>(r)])
      return fmt::format("hier all-gather needs the ranks numbered node by node (rank {} is rank {} of node {})", r,
                         layout.local_rank_of[static_cast<std::size_t>(r)],
                         layout.node_of[static_cast<std::size_t>(r)]);
  return std::nullopt;
}

std::vector<Step> plan(Collective coll, std::size_t count, const Shape& s) {
  if (count == 0) return {};
  if (s.ranks() == 1) return {copy({Buffer::send, 0}, {Buffer::recv, 0}, count, 1, count, count)};
  return coll == Collective::allgather ? plan_allgather(count, s) : plan_allreduce(count, s);
}

std::size_t scratch_elements(Collective coll, std::size_t count, const Shape& s) {
  if (coll != Collective::allgather || s.nodes == 1 || s.local_ranks == 1) return 0;
  return static_cast<std::size_t>(s.ranks()) * count;
}

int color_of(const RankLayout& layout, Level level) {
  return level == Level::node ? layout.node() : layout.local_rank();
}

std::vector<int> level_members(const RankLayout& layout, Level level) {
  std::vector<int> members;
  for (int r = 0; r < layout.nranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const int color = level == Level::node ? layout.node_of[i] : layout.local_rank_of[i];
    if (color == color_of(layout, level)) members.push_back(r);
  }
  return members;
}

RingOrderChoice level_ring_order(const RingOrderChoice& run, const std::vector<int>& members) {
  if (run.kind != RingOrderKind::list) return run;
  RingOrderChoice sub = run;
  sub.list.clear();
  for (int r : run.list) {
    const auto it = std::find(members.begin(), members.end(), r);
    if (it != members.end()) sub.list.push_back(static_cast<int>(it - members.begin()));
  }
  return sub;
}

const char* name(Level level) { return level == Level::node ? "node" : "across"; }

}  // namespace ccbench::hier
