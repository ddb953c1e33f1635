#include "collectives/types.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace ccbench {

namespace {

template <typename E, size_t N>
std::optional<E> lookup(std::string_view s, const std::pair<std::string_view, E> (&table)[N]) {
  for (const auto& [n, e] : table)
    if (n == s) return e;
  return std::nullopt;
}

constexpr std::pair<std::string_view, DataType> kTypeNames[] = {
    {"int8", DataType::int8},       {"char", DataType::int8},      {"uint8", DataType::uint8},
    {"int32", DataType::int32},     {"int", DataType::int32},      {"uint32", DataType::uint32},
    {"int64", DataType::int64},     {"uint64", DataType::uint64},  {"half", DataType::float16},
    {"float16", DataType::float16}, {"fp16", DataType::float16},   {"bfloat16", DataType::bfloat16},
    {"bf16", DataType::bfloat16},   {"float", DataType::float32},  {"float32", DataType::float32},
    {"fp32", DataType::float32},    {"double", DataType::float64}, {"float64", DataType::float64},
    {"fp64", DataType::float64},    {"f8e4m3", DataType::f8e4m3},  {"fp8_e4m3", DataType::f8e4m3},
    {"e4m3", DataType::f8e4m3},     {"f8e5m2", DataType::f8e5m2},  {"fp8_e5m2", DataType::f8e5m2},
    {"e5m2", DataType::f8e5m2},
};
constexpr std::pair<std::string_view, ReduceOp> kOpNames[] = {
    {"sum", ReduceOp::sum}, {"prod", ReduceOp::prod}, {"min", ReduceOp::min},
    {"max", ReduceOp::max}, {"avg", ReduceOp::avg},
};
constexpr std::pair<std::string_view, Collective> kCollNames[] = {
    {"allreduce", Collective::allreduce},
    {"all_reduce", Collective::allreduce},
    {"allgather", Collective::allgather},
    {"all_gather", Collective::allgather},
    {"reducescatter", Collective::reducescatter},
    {"reduce_scatter", Collective::reducescatter},
    {"broadcast", Collective::broadcast},
    {"sendrecv", Collective::sendrecv},
    {"alltoall", Collective::alltoall},
    {"all_to_all", Collective::alltoall},
    {"alltoallv", Collective::alltoallv},
    {"reduce", Collective::reduce},
    {"gather", Collective::gather},
    {"scatter", Collective::scatter},
};

}  // namespace

std::string_view name(DataType t) {
  switch (t) {
    case DataType::int8: return "int8";
    case DataType::uint8: return "uint8";
    case DataType::int32: return "int32";
    case DataType::uint32: return "uint32";
    case DataType::int64: return "int64";
    case DataType::uint64: return "uint64";
    case DataType::float16: return "half";
    case DataType::bfloat16: return "bfloat16";
    case DataType::float32: return "float";
    case DataType::float64: return "double";
    case DataType::f8e4m3: return "f8e4m3";
    case DataType::f8e5m2: return "f8e5m2";
  }
  return "?";
}

std::string_view name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::prod: return "prod";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
    case ReduceOp::avg: return "avg";
    case ReduceOp::none: return "none";
  }
  return "?";
}

std::string_view name(Collective c) { return collective_descriptor(c).name; }

std::string_view name(InputPattern p) { return p == InputPattern::precision ? "precision" : "integer"; }

std::optional<DataType> parse_data_type(std::string_view s) { return lookup(s, kTypeNames); }
std::optional<ReduceOp> parse_reduce_op(std::string_view s) { return lookup(s, kOpNames); }
std::optional<Collective> parse_collective(std::string_view s) { return lookup(s, kCollNames); }

std::string valid_data_types() {
  return join_names(std::vector<DataType>(std::begin(kAllDataTypes), std::end(kAllDataTypes)));
}
std::string valid_reduce_ops() {
  return join_names(std::vector<ReduceOp>(std::begin(kAllReduceOps), std::end(kAllReduceOps)));
}
std::string valid_collectives() {
  return join_names(std::vector<Collective>(std::begin(kAllCollectives), std::end(kAllCollectives)));
}

size_t element_size(DataType t) {
  switch (t) {
    case DataType::int8:
    case DataType::uint8:
    case DataType::f8e4m3:
    case DataType::f8e5m2: return 1;
    case DataType::float16:
    case DataType::bfloat16: return 2;
    case DataType::int32:
    case DataType::uint32:
    case DataType::float32: return 4;
    case DataType::int64:
    case DataType::uint64:
    case DataType::float64: return 8;
  }
  return 1;
}

std::vector<Collective> CollectiveSet::list() const {
  std::vector<Collective> out;
  for (Collective c : kAllCollectives)
    if (contains(c)) out.push_back(c);
  return out;
}

namespace {

// The units of `count` elements in a buffer of multiple m.
size_t units(BlockMultiple m, size_t nranks) {
  switch (m) {
    case BlockMultiple::one: return 1;
    case BlockMultiple::ranks: return nranks;
    case BlockMultiple::skewed: return nranks * (nranks + 1) / 2;
  }
  return 1;
}

// The units of `count` elements that a requested size covers.
size_t size_units(Collective c, size_t nranks) {
  const CollectiveDescriptor& d = collective_descriptor(c);
  return d.size_is_total ? std::max(units(d.send, nranks), units(d.recv, nranks)) : 1;
}

}  // namespace

CollectiveShape shape_for_count(Collective c, DataType t, int nranks, size_t count) {
  const CollectiveDescriptor& d = collective_descriptor(c);
  const size_t n = static_cast<size_t>(nranks > 0 ? nranks : 1);
  CollectiveShape s;
  s.count = count;
  s.send_elements = count * units(d.send, n);
  s.recv_elements = count * units(d.recv, n);
  s.bytes = count * size_units(c, n) * element_size(t);
  return s;
}

CollectiveShape shape_for_bytes(Collective c, DataType t, int nranks, size_t requested_bytes) {
  const size_t n = static_cast<size_t>(nranks > 0 ? nranks : 1);
  return shape_for_count(c, t, nranks, requested_bytes / element_size(t) / size_units(c, n));
}

double bus_factor(Collective c, int nranks) {
  const double n = nranks;
  switch (collective_descriptor(c).bus) {
    case BusFactorRule::one: return 1.0;
    case BusFactorRule::ranks_minus_1: return (n - 1) / n;
    case BusFactorRule::two_ranks_minus_1: return 2.0 * (n - 1) / n;
    case BusFactorRule::skewed_leaving: return 1.0 - 2.0 / (n * (n + 1));
  }
  return 1.0;
}

size_t in_place_send_offset(Collective c, int rank, size_t count) {
  return collective_descriptor(c).in_place == InPlaceLayout::send_in_recv_block ? static_cast<size_t>(rank) * count : 0;
}
size_t in_place_recv_offset(Collective c, int rank, size_t count) {
  return collective_descriptor(c).in_place == InPlaceLayout::recv_in_send_block ? static_cast<size_t>(rank) * count : 0;
}
bool supports_in_place(Collective c) { return collective_descriptor(c).in_place != InPlaceLayout::none; }

size_t output_elements(Collective c, int rank, int root, const CollectiveShape& shape) {
  if (collective_descriptor(c).output == OutputRanks::root_only && rank != root) return 0;
  return shape.recv_elements;
}

bool repeats_in_place(Collective c, ReduceOp op) {
  const CollectiveDescriptor& d = collective_descriptor(c);
  if (d.in_place == InPlaceLayout::none) return false;
  if (d.reduces) return op == ReduceOp::min || op == ReduceOp::max;
  return d.repeats_in_place;
}

CallBuffers call_buffers(Collective c, bool in_place, std::byte* S, std::byte* R, int rank, size_t count,
                         size_t element_bytes) {
  CallBuffers b;
  b.send = S;
  b.recv = R;
  if (!in_place) return b;
  const size_t block = static_cast<size_t>(rank) * count * element_bytes;
  switch (collective_descriptor(c).in_place) {
    case InPlaceLayout::none: fail(ExitCode::usage, "{} has no in-place form", name(c));
    case InPlaceLayout::same_buffer:
      b.restore_at = R;
      b.poison_recv = false;
      break;
    case InPlaceLayout::send_in_recv_block: b.restore_at = R + block; break;
    case InPlaceLayout::recv_in_send_block:
      b.restore_at = S;
      b.recv = S + block;
      b.poison_recv = false;
      b.out_in_send = true;
      break;
  }
  b.send = b.restore_at;
  return b;
}

}  // namespace ccbench
