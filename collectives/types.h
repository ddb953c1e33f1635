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

// f8e4m3 and f8e5m2: the OCP 8-bit floats of CUDA's __nv_fp8_e4m3 / __nv_fp8_e5m2 and NCCL's
// ncclFloat8e4m3 / ncclFloat8e5m2 (collectives/numeric.h says how they round and saturate).
enum class DataType { int8, uint8, int32, uint32, int64, uint64, float16, bfloat16, float32, float64, f8e4m3, f8e5m2 };
enum class ReduceOp { sum, prod, min, max, avg, none };
// The input patterns of the checks (collectives/verifiable.h says what each holds): integer,
// small whole numbers exact in every type (nccl-tests' verifiable inputs, the default); precision,
// values that need each floating type's whole mantissa and exponent range, signed zeros, NaN
// and, for the narrow floats, subnormals and every bit pattern.
enum class InputPattern : std::uint8_t { integer, precision };
enum class Collective {
  allreduce,
  allgather,
  reducescatter,
  broadcast,
  sendrecv,
  alltoall,
  alltoallv,
  reduce,
  gather,
  scatter
};

inline constexpr DataType kAllDataTypes[] = {
    DataType::int8,    DataType::uint8,    DataType::int32,   DataType::uint32,  DataType::int64,  DataType::uint64,
    DataType::float16, DataType::bfloat16, DataType::float32, DataType::float64, DataType::f8e4m3, DataType::f8e5m2};
inline constexpr ReduceOp kAllReduceOps[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max,
                                             ReduceOp::avg};
inline constexpr Collective kAllCollectives[] = {
    Collective::allreduce, Collective::allgather, Collective::reducescatter, Collective::broadcast,
    Collective::sendrecv,  Collective::alltoall,  Collective::alltoallv,     Collective::reduce,
    Collective::gather,    Collective::scatter};

// Canonical names are nccl-tests' (int8 ... half, float, double, bfloat16, f8e4m3, f8e5m2; sum, prod,
// min, max, avg).
std::string_view name(DataType t);
std::string_view name(ReduceOp op);
std::string_view name(Collective c);
std::string_view name(InputPattern p);
// Parsers accept the canonical names and common aliases (fp16, bf16, fp32, fp8_e4m3, all_reduce ...);
// they return nullopt for anything else.
std::optional<DataType> parse_data_type(std::string_view s);
std::optional<ReduceOp> parse_reduce_op(std::string_view s);
std::optional<Collective> parse_collective(std::string_view s);
// "valid: a, b, c" lists for error messages.
std::string valid_data_types();
std::string valid_reduce_ops();
std::string valid_collectives();

size_t element_size(DataType t);

// ---- One descriptor per collective ---------------------------------------------------------
// Every fact the harness and the checks need about a collective lives in its descriptor
// (collective_descriptor()): adding a collective means adding its descriptor, its expected
// output (collectives/verifiable.h) and the implementations that support it.

// Elements of a rank's send or receive buffer, as a multiple of CollectiveShape::count.
enum class BlockMultiple : std::uint8_t {
  one,     // count elements
  ranks,   // nranks x count elements: one block per rank
  skewed,  // alltoallv: n(n+1)/2 x count elements, blocks of 1..n units of count (alltoallv_block)
};
// How busbw follows from algbw (nccl-tests doc/PERFORMANCE.md).
enum class BusFactorRule : std::uint8_t {
  one,                // broadcast, sendrecv: every byte crosses one link once
  ranks_minus_1,      // all-gather, reduce-scatter: (n-1)/n of the data leaves each rank
  two_ranks_minus_1,  // all-reduce: a reduce-scatter then an all-gather, 2(n-1)/n
  skewed_leaving,     // alltoallv: the share of a rank's data that leaves it, 1 - 2/(n(n+1))
};
// Which ranks' receive buffers hold output.
enum class OutputRanks : std::uint8_t {
  every_rank,
  root_only,  // reduce, gather: the receive buffer of the other ranks is not touched
};
// Where the input sits when the collective runs in place (as NCCL lays it out).
enum class InPlaceLayout : std::uint8_t {
  none,                // no in-place form (sendrecv would overwrite the data being sent)
  same_buffer,         // send == recv
  send_in_recv_block,  // send = recv + rank*count (all-gather)
  recv_in_send_block,  // recv = send + rank*count (reduce-scatter)
};

struct CollectiveDescriptor {
  Collective coll;
  std::string_view name;  // canonical name, as nccl-tests spells the test (without "_perf")
  // Shape: a requested size of S bytes is the whole send (or receive, whichever is larger)
  // buffer when `size_is_total`, else one rank's input; `count` is rounded down to whole elements.
  bool size_is_total;
  BlockMultiple send, recv;
  BusFactorRule bus;
  bool reduces;  // takes a ReduceOp (all-reduce, reduce-scatter, reduce); the others use ReduceOp::none
  bool rooted;   // has a root rank (broadcast, reduce, gather, scatter)
  OutputRanks output;
  InPlaceLayout in_place;
  // Whether running the collective again, in place, on its own output gives the same output,
  // whatever the op (data movement); reducing collectives repeat exactly for min and max only.
  bool repeats_in_place;
};

// The descriptors, in the order of the Collective enum (one per collective). Sizes and busbw as
// nccl-tests: all-to-all's S is one rank's whole send buffer (n blocks), gather's and scatter's
// the root's whole n-block buffer, reduce's one rank's input.
inline constexpr CollectiveDescriptor kCollectiveDescriptors[] = {
    {Collective::allreduce, "allreduce", false, BlockMultiple::one, BlockMultiple::one,
     BusFactorRule::two_ranks_minus_1, true, false, OutputRanks::every_rank, InPlaceLayout::same_buffer, false},
    {Collective::allgather, "allgather", true, BlockMultiple::one, BlockMultiple::ranks, BusFactorRule::ranks_minus_1,
     false, false, OutputRanks::every_rank, InPlaceLayout::send_in_recv_block, true},
    {Collective::reducescatter, "reducescatter", true, BlockMultiple::ranks, BlockMultiple::one,
     BusFactorRule::ranks_minus_1, true, false, OutputRanks::every_rank, InPlaceLayout::recv_in_send_block, false},
    {Collective::broadcast, "broadcast", false, BlockMultiple::one, BlockMultiple::one, BusFactorRule::one, false, true,
     OutputRanks::every_rank, InPlaceLayout::same_buffer, true},
    {Collective::sendrecv, "sendrecv", false, BlockMultiple::one, BlockMultiple::one, BusFactorRule::one, false, false,
     OutputRanks::every_rank, InPlaceLayout::none, false},
    // All-to-all: block p of my send buffer goes to rank p, block p of my receive buffer comes
    // from rank p. No in-place form: a block would be overwritten before it is sent.
    {Collective::alltoall, "alltoall", true, BlockMultiple::ranks, BlockMultiple::ranks, BusFactorRule::ranks_minus_1,
     false, false, OutputRanks::every_rank, InPlaceLayout::none, false},
    // Skewed all-to-all: rank r sends 1 + (p - r) mod n units of count elements to rank p (to
    // itself 1, to the next rank 2, ..., to the previous rank n), so every pair of ranks moves a
    // different amount while every rank sends and receives n(n+1)/2 units: S is that total.
    {Collective::alltoallv, "alltoallv", true, BlockMultiple::skewed, BlockMultiple::skewed,
     BusFactorRule::skewed_leaving, false, false, OutputRanks::every_rank, InPlaceLayout::none, false},
    {Collective::reduce, "reduce", false, BlockMultiple::one, BlockMultiple::one, BusFactorRule::one, true, true,
     OutputRanks::root_only, InPlaceLayout::same_buffer, false},
    {Collective::gather, "gather", true, BlockMultiple::one, BlockMultiple::ranks, BusFactorRule::ranks_minus_1, false,
     true, OutputRanks::root_only, InPlaceLayout::send_in_recv_block, true},
    {Collective::scatter, "scatter", true, BlockMultiple::ranks, BlockMultiple::one, BusFactorRule::ranks_minus_1,
     false, true, OutputRanks::every_rank, InPlaceLayout::recv_in_send_block, true},
};

constexpr const CollectiveDescriptor& collective_descriptor(Collective c) {
  return kCollectiveDescriptors[static_cast<int>(c)];
}
static_assert(
    [] {
      for (int i = 0; i < static_cast<int>(std::size(kCollectiveDescriptors)); ++i)
        if (static_cast<int>(kCollectiveDescriptors[i].coll) != i) return false;
      return std::size(kCollectiveDescriptors) == std::size(kAllCollectives);
    }(),
    "kCollectiveDescriptors: one descriptor per collective, in enum order");

// Facts of the table as bit masks (bit = the collective's enum value), folded at compile time:
// CUDA kernels may ask has_reduce_op() and has_root() with a run-time collective, and the table
// itself lives in host memory only, so device code must never index it.
template <typename Flag>
constexpr unsigned descriptor_mask(Flag flag) {
  unsigned mask = 0;
  for (const CollectiveDescriptor& d : kCollectiveDescriptors)
    if (flag(d)) mask |= 1u << static_cast<int>(d.coll);
  return mask;
}
inline constexpr unsigned kReducingCollectives =
    descriptor_mask([](const CollectiveDescriptor& d) { return d.reduces; });
inline constexpr unsigned kRootedCollectives = descriptor_mask([](const CollectiveDescriptor& d) { return d.rooted; });

// constexpr scalars only, so that CUDA kernels can use them (nvcc --expt-relaxed-constexpr).
constexpr bool has_reduce_op(Collective c) { return (kReducingCollectives >> static_cast<int>(c)) & 1u; }
constexpr bool has_root(Collective c) { return (kRootedCollectives >> static_cast<int>(c)) & 1u; }

// alltoallv's skew, in elements for `count` elements per unit: what rank `from` sends rank `to`,
// and where that block starts in the sender's send buffer and in the receiver's receive buffer
// (blocks in rank order).
constexpr size_t alltoallv_units(int from, int to, int nranks) {
  return 1 + static_cast<size_t>(((to - from) % nranks + nranks) % nranks);
}
constexpr size_t alltoallv_block(int from, int to, int nranks, size_t count) {
  return alltoallv_units(from, to, nranks) * count;
}
constexpr size_t alltoallv_send_offset(int rank, int peer, int nranks, size_t count) {
  size_t units = 0;
  for (int q = 0; q < peer; ++q) units += alltoallv_units(rank, q, nranks);
  return units * count;
}
constexpr size_t alltoallv_recv_offset(int rank, int peer, int nranks, size_t count) {
  size_t units = 0;
  for (int q = 0; q < peer; ++q) units += alltoallv_units(q, rank, nranks);
  return units * count;
}

// The block rank `from` sends rank `to` in the collectives that move blocks between pairs of
// ranks (all-to-all, alltoallv, gather, scatter), in elements for `count` elements per piece:
// where it starts in the sender's send buffer and in the receiver's receive buffer, and its
// length (0 for the other collectives). Which pairs exchange a block is moves_block().
struct PeerBlock {
  size_t send_offset = 0, recv_offset = 0, count = 0;
};
constexpr PeerBlock peer_block(Collective c, int from, int to, int nranks, size_t count) {
  const auto f = static_cast<size_t>(from), t = static_cast<size_t>(to);
  if (c == Collective::alltoall) return {t * count, f * count, count};
  if (c == Collective::alltoallv)
    return {alltoallv_send_offset(from, to, nranks, count), alltoallv_recv_offset(to, from, nranks, count),
            alltoallv_block(from, to, nranks, count)};
  if (c == Collective::gather) return {0, f * count, count};
  if (c == Collective::scatter) return {t * count, 0, count};
  return {};
}
// Whether rank `from` sends rank `to` a block (itself included: its own block, copied locally):
// every pair in all-to-all and alltoallv, gather only to the root, scatter only from it.
constexpr bool moves_block(Collective c, int from, int to, int root) {
  if (c == Collective::gather) return to == root;
  if (c == Collective::scatter) return from == root;
  return c == Collective::alltoall || c == Collective::alltoallv;
}

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
  size_t count = 0;          // elements per rank in the input (all-gather, reduce-scatter: per-rank piece)
  size_t send_elements = 0;  // elements in each rank's send buffer
  size_t recv_elements = 0;  // elements in each rank's receive buffer
  size_t bytes = 0;          // the algbw size S reported for this measurement
};
// Sizes follow nccl-tests: for the collectives whose descriptor says size_is_total (all-gather,
// reduce-scatter, all-to-all, gather, scatter: n pieces; alltoallv: n(n+1)/2 units) the size is the
// whole buffer, rounded down to whole pieces; a size below one element per piece gives count 0.
CollectiveShape shape_for_bytes(Collective c, DataType t, int nranks, size_t requested_bytes);
// The shape for `count` elements per piece (CollectiveShape::count), elements of type t.
CollectiveShape shape_for_count(Collective c, DataType t, int nranks, size_t count);

// busbw = algbw * bus_factor (nccl-tests): all-reduce 2(n-1)/n; all-gather, reduce-scatter,
// all-to-all, gather, scatter (n-1)/n; broadcast, reduce, sendrecv 1; alltoallv 1 - 2/(n(n+1)),
// the share of a rank's send buffer that goes to other ranks (its own block is 1 of n(n+1)/2 units).
double bus_factor(Collective c, int nranks);

// In-place layouts (as NCCL): all-gather and gather send from recv + rank*count, reduce-scatter and
// scatter receive into send + rank*count, the others use one buffer. Offsets in elements into the receive buffer (for
// all-gather) or into the send buffer (reduce-scatter).
size_t in_place_send_offset(Collective c, int rank, size_t count);  // into recv (all-gather)
size_t in_place_recv_offset(Collective c, int rank, size_t count);  // into send (reduce-scatter)
// Whether an in-place form exists; sendrecv and all-to-all have none (they would overwrite data
// before it is sent).
bool supports_in_place(Collective c);

// How many of the shape's recv_elements hold output on `rank`: all, or none away from the root of
// a root-only collective (reduce, gather) — what the harness fills as expected and compares.
size_t output_elements(Collective c, int rank, int root, const CollectiveShape& shape);

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
