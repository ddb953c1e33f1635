// collectives/types.h: the figures users read. bus_factor and shape_for_bytes for every collective
// and every rank count from 1 to 64, against nccl-tests' doc/PERFORMANCE.md ("Summary": the bus
// bandwidth correction factor per collective; S, the size reported, is the total array for
// all-gather and reduce-scatter) and the per-collective files of nccl-tests (sendrecv.cu: factor 1).
// The expectations are written from those documents here, independently of the implementation.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "collectives/types.h"

namespace ccbench {
namespace {

constexpr int kMaxRanks = 64;

// nccl-tests' correction factor, by collective name; n = ranks.
const std::map<std::string, std::function<double(double)>>& documented_factors() {
  static const std::map<std::string, std::function<double(double)>> f = {
      {"allreduce", [](double n) { return 2 * (n - 1) / n; }},
      {"reducescatter", [](double n) { return (n - 1) / n; }},
      {"allgather", [](double n) { return (n - 1) / n; }},
      {"alltoall", [](double n) { return (n - 1) / n; }},
      {"gather", [](double n) { return (n - 1) / n; }},
      {"scatter", [](double n) { return (n - 1) / n; }},
      {"broadcast", [](double) { return 1.0; }},
      {"reduce", [](double) { return 1.0; }},
      {"sendrecv", [](double) { return 1.0; }},
      // Not in nccl-tests: ccbench's skewed all-to-all (docs/design.md, "Reading algbw and
      // busbw"): rank r sends 1 + (p - r) mod n units to peer p, n(n+1)/2 units in all, of which
      // the n units a rank keeps for itself never cross a link.
      {"alltoallv", [](double n) { return 1.0 - 2.0 / (n * (n + 1)); }},
  };
  return f;
}

// How nccl-tests turns a requested size into counts: the elements of one rank's piece are
// size / element / n for the collectives whose S is the total of n pieces, and S is rebuilt from
// whole elements.
enum class Sizing { whole, per_rank_piece_in, per_rank_piece_out, per_rank_pieces_both, skewed_units };
const std::map<std::string, Sizing>& documented_sizing() {
  static const std::map<std::string, Sizing> s = {
      {"allreduce", Sizing::whole},           {"broadcast", Sizing::whole},
      {"reduce", Sizing::whole},              {"sendrecv", Sizing::whole},
      {"allgather", Sizing::per_rank_piece_in},  // send: one piece; receive: n pieces
      {"gather", Sizing::per_rank_piece_in},
      {"reducescatter", Sizing::per_rank_piece_out},  // send: n pieces; receive: one piece
      {"scatter", Sizing::per_rank_piece_out},
      {"alltoall", Sizing::per_rank_pieces_both},  // n pieces in, n pieces out
      {"alltoallv", Sizing::skewed_units},          // n(n+1)/2 units in and out
  };
  return s;
}

CollectiveShape documented_shape(Sizing how, std::size_t esz, std::size_t n, std::size_t bytes) {
  CollectiveShape s;
  if (how == Sizing::whole) {
    s.count = bytes / esz;
    s.send_elements = s.recv_elements = s.count;
    s.bytes = s.count * esz;
    return s;
  }
  if (how == Sizing::skewed_units) {
    const std::size_t units = n * (n + 1) / 2;
    s.count = bytes / esz / units;
    s.send_elements = s.recv_elements = s.count * units;
    s.bytes = s.send_elements * esz;
    return s;
  }
  s.count = bytes / esz / n;
  s.bytes = s.count * n * esz;
  s.send_elements = how == Sizing::per_rank_piece_in ? s.count : s.count * n;
  s.recv_elements = how == Sizing::per_rank_piece_out ? s.count : s.count * n;
  return s;
}

TEST(BusFactor, EveryCollectiveAndRankCountAsNcclTests) {
  for (Collective c : kAllCollectives) {
    const std::string coll(name(c));
    auto it = documented_factors().find(coll);
    ASSERT_NE(it, documented_factors().end()) << coll << ": add its factor from nccl-tests doc/PERFORMANCE.md here";
    for (int n = 1; n <= kMaxRanks; ++n)
      EXPECT_DOUBLE_EQ(bus_factor(c, n), it->second(n)) << coll << " with " << n << " ranks";
  }
}

TEST(BusFactor, KnownValues) {
  // Spelled out for the common cases, so that a wrong formula above cannot hide a wrong product.
  EXPECT_DOUBLE_EQ(bus_factor(Collective::allreduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::allreduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::allreduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::allgather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::reducescatter, 64), 63.0 / 64.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::broadcast, 64), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::sendrecv, 2), 1.0);
}

TEST(ShapeForBytes, EveryCollectiveDtypeAndRankCountAsNcclTests) {
  // Awkward sizes: zero, below one element, not a multiple of the element or the ranks, large.
  const std::size_t sizes[] = {0, 1, 3, 8, 100, 1000, 4096, 65537, (1u << 20) + 12, std::size_t(3) << 30};
  for (Collective c : kAllCollectives) {
    const std::string coll(name(c));
    auto how = documented_sizing().find(coll);
    ASSERT_NE(how, documented_sizing().end()) << coll << ": add its sizing from nccl-tests here";
    for (DataType t : kAllDataTypes)
      for (int n = 1; n <= kMaxRanks; ++n)
        for (std::size_t bytes : sizes) {
          const CollectiveShape want = documented_shape(how->second, element_size(t), n, bytes);
          const CollectiveShape got = shape_for_bytes(c, t, n, bytes);
          const std::string where = coll + " " + std::string(name(t)) + " n=" + std::to_string(n) +
                                    " bytes=" + std::to_string(bytes);
          EXPECT_EQ(got.count, want.count) << where;
          EXPECT_EQ(got.send_elements, want.send_elements) << where;
          EXPECT_EQ(got.recv_elements, want.recv_elements) << where;
          EXPECT_EQ(got.bytes, want.bytes) << where;
          EXPECT_LE(got.bytes, bytes) << where << ": S never exceeds the size asked for";
        }
  }
}

TEST(ShapeForBytes, KnownValues) {
  // 1 MiB of float all-gather over 3 ranks: 87381 elements per rank, S = 3 pieces.
  CollectiveShape ag = shape_for_bytes(Collective::allgather, DataType::float32, 3, 1 << 20);
  EXPECT_EQ(ag.count, 87381u);
  EXPECT_EQ(ag.send_elements, 87381u);
  EXPECT_EQ(ag.recv_elements, 3u * 87381u);
  EXPECT_EQ(ag.bytes, 3u * 87381u * 4u);
  // 8 B of double reduce-scatter over 2 ranks: less than one element per rank.
  EXPECT_EQ(shape_for_bytes(Collective::reducescatter, DataType::float64, 2, 8).count, 0u);
  // 7 B of half all-reduce: 3 elements, S = 6.
  CollectiveShape ar = shape_for_bytes(Collective::allreduce, DataType::float16, 5, 7);
  EXPECT_EQ(ar.count, 3u);
  EXPECT_EQ(ar.bytes, 6u);
}

}  // namespace
}  // namespace ccbench
