#include "collectives/types.h"

#include <utility>

namespace ccbench {

namespace {

template <typename E, size_t N>
std::optional<E> lookup(std::string_view s, const std::pair<std::string_view, E> (&table)[N]) {
  for (const auto& [n, e] : table)
    if (n == s) return e;
  return std::nullopt;
}

constexpr std::pair<std::string_view, DataType> kTypeNames[] = {
    {"int8", DataType::int8},       {"char", DataType::int8},         {"uint8", DataType::uint8},
    {"int32", DataType::int32},     {"int", DataType::int32},         {"uint32", DataType::uint32},
    {"int64", DataType::int64},     {"uint64", DataType::uint64},     {"half", DataType::float16},
    {"float16", DataType::float16}, {"fp16", DataType::float16},      {"bfloat16", DataType::bfloat16},
    {"bf16", DataType::bfloat16},   {"float", DataType::float32},     {"float32", DataType::float32},
    {"fp32", DataType::float32},    {"double", DataType::float64},    {"float64", DataType::float64},
    {"fp64", DataType::float64},
};
constexpr std::pair<std::string_view, ReduceOp> kOpNames[] = {
    {"sum", ReduceOp::sum}, {"prod", ReduceOp::prod}, {"min", ReduceOp::min},
    {"max", ReduceOp::max}, {"avg", ReduceOp::avg},
};
constexpr std::pair<std::string_view, Collective> kCollNames[] = {
    {"allreduce", Collective::allreduce},         {"all_reduce", Collective::allreduce},
    {"allgather", Collective::allgather},         {"all_gather", Collective::allgather},
    {"reducescatter", Collective::reducescatter}, {"reduce_scatter", Collective::reducescatter},
    {"broadcast", Collective::broadcast},         {"sendrecv", Collective::sendrecv},
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

std::string_view name(Collective c) {
  switch (c) {
    case Collective::allreduce: return "allreduce";
    case Collective::allgather: return "allgather";
    case Collective::reducescatter: return "reducescatter";
    case Collective::broadcast: return "broadcast";
    case Collective::sendrecv: return "sendrecv";
  }
  return "?";
}

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
    case DataType::uint8: return 1;
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


CollectiveShape shape_for_bytes(Collective c, DataType t, int nranks, size_t requested_bytes) {
  const size_t esz = element_size(t);
  const size_t n = static_cast<size_t>(nranks);
  CollectiveShape s;
  switch (c) {
    case Collective::allreduce:
    case Collective::broadcast:
    case Collective::sendrecv:
      s.count = requested_bytes / esz;
      s.send_elements = s.recv_elements = s.count;
      s.bytes = s.count * esz;
      break;
    case Collective::allgather:
      s.count = requested_bytes / esz / n;
      s.send_elements = s.count;
      s.recv_elements = s.count * n;
      s.bytes = s.count * n * esz;
      break;
    case Collective::reducescatter:
      s.count = requested_bytes / esz / n;
      s.send_elements = s.count * n;
      s.recv_elements = s.count;
      s.bytes = s.count * n * esz;
      break;
  }
  return s;
}

double bus_factor(Collective c, int nranks) {
  const double n = nranks;
  switch (c) {
    case Collective::allreduce: return 2.0 * (n - 1) / n;
    case Collective::allgather:
    case Collective::reducescatter: return (n - 1) / n;
    case Collective::broadcast:
    case Collective::sendrecv: return 1.0;
  }
  return 1.0;
}

size_t in_place_send_offset(Collective c, int rank, size_t count) {
  return c == Collective::allgather ? static_cast<size_t>(rank) * count : 0;
}
size_t in_place_recv_offset(Collective c, int rank, size_t count) {
  return c == Collective::reducescatter ? static_cast<size_t>(rank) * count : 0;
}
bool supports_in_place(Collective c) { return c != Collective::sendrecv; }

}  // namespace ccbench
