#pragma once
// The vocabulary of what is measured: collectives, data types, reduction operations, and the
// byte/element arithmetic of each collective (nccl-tests doc/PERFORMANCE.md).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
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
bool is_floating(DataType t);

// ---- One descriptor per collective ---------------------------------------------------------
// Every fact the harness and the checks need about a collective lives in its descriptor
// (collective_descriptor()): adding a collective means adding its descriptor, its expected
// output (collectives/verifiable.h) and the implementations that support it.

// Elements of a rank's send or receive buffer, as a multiple of CollectiveShape::count.
enum class BlockMultiple : std::uint8_t {
  one,    // count elements
  ranks,  // nranks x count elements: one block per rank
};
// How busbw follows from algbw (nccl-tests doc/PERFORMANCE.md).
enum class BusFactorRule : std::uint8_t {
  one,                 // broadcast, sendrecv: every byte crosses one link once
  ranks_minus_1,       // all-gather, reduce-scatter: (n-1)/n of the data leaves each rank
  two_ranks_minus_1,   // all-reduce: a reduce-scatter then an all-gather, 2(n-1)/n
};
// Where the input sits when the collective runs in place (as NCCL lays it out).
enum class InPlaceLayout : std::uint8_t {
  none,               // no in-place form (sendrecv would overwrite the data being sent)
  same_buffer,        // send == recv
  send_in_recv_block, // send = recv + rank*count (all-gather)
  recv_in_send_block, // recv = send + rank*count (reduce-scatter)
};

struct CollectiveDescriptor {
  Collective coll;
  std::string_view name;  // canonical name, as nccl-tests spells the test (without "_perf")
  // Shape: a requested size of S bytes is the whole send (or receive, whichever is larger)
  // buffer when `size_is_total`, else one rank's input; `count` is rounded down to whole elements.
  bool size_is_total;
  BlockMultiple send, recv;
  BusFactorRule bus;
  bool reduces;  // takes a ReduceOp (all-reduce, reduce-scatter); the others use ReduceOp::none
  bool rooted;   // has a root rank (broadcast)
  InPlaceLayout in_place;
  // Whether running the collective again, in place, on its own output gives the same output,
  // whatever the op (data movement); reducing collectives repeat exactly for min and max only.
  bool repeats_in_place;
};

// The descriptors, in the order of the Collective enum (one per collective).
inline constexpr CollectiveDescriptor kCollectiveDescriptors[] = {
    {Collective::allreduce, "allreduce", false, BlockMultiple::one, BlockMultiple::one,
     BusFactorRule::two_ranks_minus_1, true, false, InPlaceLayout::same_buffer, false},
    {Collective::allgather, "allgather", true, BlockMultiple::one, BlockMultiple::ranks,
     BusFactorRule::ranks_minus_1, false, false, InPlaceLayout::send_in_recv_block, true},
    {Collective::reducescatter, "reducescatter", true, BlockMultiple::ranks, BlockMultiple::one,
     BusFactorRule::ranks_minus_1, true, false, InPlaceLayout::recv_in_send_block, false},
    {Collective::broadcast, "broadcast", false, BlockMultiple::one, BlockMultiple::one, BusFactorRule::one, false,
     true, InPlaceLayout::same_buffer, true},
    {Collective::sendrecv, "sendrecv", false, BlockMultiple::one, BlockMultiple::one, BusFactorRule::one, false,
     false, InPlaceLayout::none, false},
};

constexpr const CollectiveDescriptor& collective_descriptor(Collective c) {
  return kCollectiveDescriptors[static_cast<int>(c)];
}
static_assert([] {
  for (int i = 0; i < static_cast<int>(std::size(kCollectiveDescriptors)); ++i)
    if (static_cast<int>(kCollectiveDescriptors[i].coll) != i) return false;
  return std::size(kCollectiveDescriptors) == std::size(kAllCollectives);
}(), "kCollectiveDescriptors: one descriptor per collective, in enum order");

// constexpr so that CUDA kernels can use them (nvcc --expt-relaxed-constexpr).
constexpr bool has_reduce_op(Collective c) { return collective_descriptor(c).reduces; }
constexpr bool has_root(Collective c) { return collective_descriptor(c).rooted; }

// A set of collectives: what an implementation declares it supports.
class CollectiveSet {
 public:
  constexpr CollectiveSet(std::initializer_list<Collective> cs) {
    for (Collective c : cs) bits_ |= bit(c);
  }
  constexpr bool contains(Collective c) const { return (bits_ & bit(c)) != 0; }
  std::vector<Collective> list() const;  // in kAllCollectives order

 private:
  static constexpr std::uint32_t bit(Collective c) { return 1u << static_cast<int>(c); }
  std::uint32_t bits_ = 0;
};

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

// Whether the output of back-to-back in-place iterations can be checked: running the case again
// on its own output gives the same output (data movement; min and max).
bool repeats_in_place(Collective c, ReduceOp op);

// The pointers of one measurement, from the series' send buffer S and receive buffer R (each large
// enough for the shape): out of place S and R; in place per the collective's InPlaceLayout.
struct CallBuffers {
  const std::byte* send = nullptr;  // what the collective reads
  std::byte* recv = nullptr;        // what it writes: the recv_elements checked after a run
  // In place, the input lives where the collective writes and is put back before every run:
  // send_elements of pristine input go to restore_at (== send). nullptr out of place.
  std::byte* restore_at = nullptr;
  // Whether every byte of R's recv_elements is output not covered by the restored input, so R is
  // poisoned before every run (always out of place; in place only for send_in_recv_block).
  bool poison_recv = true;
  // Whether the result lands inside the send buffer (recv_in_send_block): R is then unused, its
  // guard covers nothing, and the send buffer's guard follows send_elements.
  bool out_in_send = false;
};
CallBuffers call_buffers(Collective c, bool in_place, std::byte* S, std::byte* R, int rank, size_t count,
                         size_t element_bytes);

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
