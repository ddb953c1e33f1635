#pragma once
// The vocabulary of what is measured: collectives, data types, reduction operations, and the
// byte/element arithmetic of each collective (nccl-tests doc/PERFORMANCE.md).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

enum class DataType { int8, uint8, int32, uint32, int64, uint64, float16, bfloat16, float32, float64 };
enum class ReduceOp { sum, prod, min, max, avg, none };
enum class Collective { allreduce, allgather, reducescatter, broadcast, sendrecv };

inline constexpr DataType kAllDataTypes[] = {DataType::int8,    DataType::uint8,    DataType::int32,
                                             DataType::uint32,  DataType::int64,    DataType::uint64,
                                             DataType::float16, DataType::bfloat16, DataType::float32,
                                             DataType::float64};
inline constexpr ReduceOp kAllReduceOps[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max,
                                             ReduceOp::avg};
inline constexpr Collective kAllCollectives[] = {Collective::allreduce, Collective::allgather,
                                                 Collective::reducescatter, Collective::broadcast,
                                                 Collective::sendrecv};

// Canonical names are nccl-tests' (int8 ... half, float, double, bfloat16; sum, prod, min, max, avg).
std::string_view name(DataType t);
std::string_view name(ReduceOp op);
std::string_view name(Collective c);
// Parsers accept the canonical names and common aliases (fp16, bf16, fp32, all_reduce ...);
// they return nullopt for anything else.
std::optional<DataType> parse_data_type(std::string_view s);
std::optional<ReduceOp> parse_reduce_op(std::string_view s);
std::optional<Collective> parse_collective(std::string_view s);
// "valid: a, b, c" lists for error messages.
std::string valid_data_types();
std::string valid_reduce_ops();
std::string valid_collectives();

size_t element_size(DataType t);

// constexpr so that CUDA kernels can use them (nvcc --expt-relaxed-constexpr).
constexpr bool has_reduce_op(Collective c) { return c == Collective::allreduce || c == Collective::reducescatter; }
constexpr bool has_root(Collective c) { return c == Collective::broadcast; }

// The shape of one measurement of collective `c` over `nranks` ranks for a requested size.
struct CollectiveShape {
  size_t count = 0;         // elements per rank in the input (all-gather, reduce-scatter: per-rank piece)
  size_t send_elements = 0; // elements in each rank's send buffer
  size_t recv_elements = 0; // elements in each rank's receive buffer
  size_t bytes = 0;         // the algbw size S reported for this measurement
};
// Sizes follow nccl-tests: all-gather and reduce-scatter sizes are the total (n x piece) bytes and
// are rounded down to whole elements per rank; a size below one element per rank gives count 0.
CollectiveShape shape_for_bytes(Collective c, DataType t, int nranks, size_t requested_bytes);

// busbw = algbw * bus_factor (nccl-tests): all-reduce 2(n-1)/n, all-gather and reduce-scatter
// (n-1)/n, broadcast and sendrecv 1.
double bus_factor(Collective c, int nranks);

// In-place layouts (as NCCL): all-gather sends from recv + rank*count, reduce-scatter receives into
// send + rank*count, the others use one buffer. Offsets in elements into the receive buffer (for
// all-gather) or into the send buffer (reduce-scatter).
size_t in_place_send_offset(Collective c, int rank, size_t count);  // into recv (all-gather)
size_t in_place_recv_offset(Collective c, int rank, size_t count);  // into send (reduce-scatter)
// Whether an in-place form exists; sendrecv has none (it would overwrite the data being sent).
bool supports_in_place(Collective c);

// Names of a list of collectives/types/ops joined with ", ".
template <typename T>
std::string join_names(const std::vector<T>& items) {
  std::string out;
  for (const T& x : items) {
    if (!out.empty()) out += ", ";
    out += name(x);
  }
  return out;
}

}  // namespace ccbench
