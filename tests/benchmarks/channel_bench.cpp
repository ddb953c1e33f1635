// CPU channel micro-benchmark (Google Benchmark) under `mpirun -np 2`: rank 0 streams bytes to
// rank 1 over one channel of each transport, as the CPU executors drive them (sent straight from
// the source buffer where the channel has a zero-copy send end, else copied into acquired slots
// and posted; peeked, copied out and released), and waits for rank 1's acknowledgement at the end
// of every iteration. Compares the ofi transport (libfabric) with ccbench's own over the same
// medium, and with the provider's own ceiling:
//   BM_Channel/tcp/<bytes>/<round>        ccbench's tcp transport over loopback
//   BM_Channel/ofi_tcp/<bytes>/<round>    ofi over tcp;ofi_rxm (rma), loopback
//   BM_Channel/shm/<bytes>/<round>        ccbench's shared-memory transport
//   BM_Channel/ofi_shm/<bytes>/<round>    ofi over libfabric's shm provider (rma)
//   BM_Channel/ofi_*_tagged/...           the same providers with tagged messages
//   BM_Channel/ofi_*_raw/...              the provider alone: a bare loop of the writes the rma
//                                         channel uses, same slots, window and source, no protocol
//                                         of ccbench's (ofi_raw.h); rank 1 checks the bytes landed
// Each group runs the raw row first, then its sides in an order that alternates every round (ofi
// first in odd rounds), so that load on a shared machine falls on both sides alike;
// scripts/ofi_compare.py takes the best of the rounds. Every ofi row states `of_raw`: its rate over
// the raw row's of the same round and size (like with like under --no-copy-out; otherwise the row
// includes rank 1's copy out, which the raw row does not make). Slots as the CPU implementations use them
// (CCBENCH_CPU_SLOT_BYTES / _DEPTH, 256 KiB x 4 by default). bytes_per_second counts each byte once.
// --no-copy-out (before Google Benchmark's flags): rank 1 releases each slot without copying it
// out, as the raw rows' rank 1 does, to tell the consumer's copy apart from the transport's cost.
// Run: mpirun -np 2 build/ccbench_channel_bench --benchmark_out=channels.json --benchmark_out_format=json
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <benchmark/benchmark.h>
#include <mpi.h>
#include <unistd.h>

#include "collectives/cpu/cpu_common.h"
#include "core/build_config.h"
#include "core/error.h"
#include "transports/connect.h"
#include "transports/ofi/ofi_transport.h"
#if CCBENCH_HAVE_LIBFABRIC
#include "tests/benchmarks/ofi_raw.h"
#endif

namespace ccbench {
namespace {

constexpr std::int64_t MiB = 1 << 20;
constexpr int kRounds = 3;

struct Medium {
  std::string name;                 // the benchmark's name
  std::string transport;            // connect_channels' transport; "raw": the provider alone
  std::string provider;             // ofi: --ofi-provider
  std::string protocol;             // ofi: --ofi-protocol
  std::unique_ptr<ChannelSet> set;  // request 0: rank 0 -> 1 data; request 1: rank 1 -> 0 acks
#if CCBENCH_HAVE_LIBFABRIC
  std::unique_ptr<OfiRawLoop> raw;
#endif
  std::string why_not;  // set-up failed: the benchmark is skipped with this
  bool usable() const {
#if CCBENCH_HAVE_LIBFABRIC
    if (raw) return true;
#endif
    return set != nullptr;
  }
};

std::vector<Medium>& media() {
  static std::vector<Medium> m;
  return m;
}

// The groups, by media index: the raw row first, then the sides compared.
struct Group {
  size_t raw;
  std::vector<size_t> sides;
};
const std::vector<Group> kGroups = {{6, {0, 1, 4}}, {7, {2, 3, 5}}};

int g_rank = 0;
bool g_copy_out = true;  // --no-copy-out clears it

// The raw rows' rates (bytes/s) by (raw medium, bytes, round), for the ofi rows' of_raw.
std::map<std::tuple<size_t, std::int64_t, std::int64_t>, double>& raw_rates() {
  static std::map<std::tuple<size_t, std::int64_t, std::int64_t>, double> r;
  return r;
}

// Spins on f(); the channels are non-blocking.
template <typename F>
void until(F&& f) {
  while (!f()) {}
}

// The bytes each side copies into a slot and out of one, as the executors' copies do: a buffer
// larger than the slots many times over. Byte o holds o % 251 (the raw loop checks what landed).
std::vector<char>& user_buffer() {
  static std::vector<char> b = [] {
    std::vector<char> v(64 * MiB);
    for (size_t o = 0; o < v.size(); ++o) v[o] = static_cast<char>(o % 251);
    return v;
  }();
  return b;
}

// Where piece `j` of an iteration is taken from (and copied to, on rank 1).
size_t piece_offset(std::uint64_t j, size_t slot) { return (j * slot) % (user_buffer().size() - slot); }

// Rank 0's side of one iteration: `bytes` in slot-sized pieces, then the acknowledgement.
void stream(Medium& m, std::uint64_t bytes) {
  SendChannel& tx = m.set->send(0);
  RecvChannel& rx = m.set->recv(1);
  DirectSend* direct = tx.direct();
  const size_t slot = tx.slot_bytes();
  const char* from = user_buffer().data();
  for (std::uint64_t j = 0, left = bytes; left > 0; ++j) {
    const size_t n = static_cast<size_t>(std::min<std::uint64_t>(left, slot));
    const char* src = from + piece_offset(j, slot);
    if (direct) {
      until([&] { return direct->try_post_from(src, n); });
    } else {
      void* p = nullptr;
      until([&] { return (p = tx.try_acquire()) != nullptr; });
      std::memcpy(p, src, n);
      tx.post(n);
    }
    left -= n;
  }
  size_t n = 0;
  until([&] { return rx.try_peek(&n) != nullptr; });
  rx.release();
}

// Rank 1: serves iterations of `bytes` over the channel of `m` until rank 0 ends the run with a
// message of no bytes. Only the channel in use is polled, as a rank of a collective polls its own.
void serve_channel(Medium& m, std::uint64_t bytes) {
  RecvChannel& rx = m.set->recv(0);
  SendChannel& tx = m.set->send(1);
  std::uint64_t owed = bytes, j = 0;
  for (;;) {
    size_t n = 0;
    const void* p = rx.try_peek(&n);
    if (!p) continue;
    if (n == 0) {
      rx.release();
      break;
    }
    if (g_copy_out) std::memcpy(user_buffer().data() + piece_offset(j, rx.slot_bytes()), p, n);
    ++j;
    owed -= std::min<std::uint64_t>(owed, n);
    rx.release();
    if (owed == 0) {
      void* q = nullptr;
      until([&] { return (q = tx.try_acquire()) != nullptr; });
      tx.post(8);
      owed = bytes;
      j = 0;
    }
  }
  until([&] { return tx.try_drain(); });
}

// Rank 1: serves the medium and size rank 0 names (over MPI, before each benchmark run); a
// negative medium ends the program.
void serve() {
  for (;;) {
    std::int64_t what[2] = {-1, 0};
    MPI_Recv(what, 2, MPI_INT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (what[0] < 0) return;
    Medium& m = media()[static_cast<size_t>(what[0])];
    const auto bytes = static_cast<std::uint64_t>(what[1]);
#if CCBENCH_HAVE_LIBFABRIC
    if (m.raw) {
      m.raw->serve(bytes);
      continue;
    }
#endif
    serve_channel(m, bytes);
  }
}

// Rank 0: ends rank 1's service of `m` (a message of no bytes); false when a raw loop's bytes did
// not land.
bool pause(Medium& m) {
#if CCBENCH_HAVE_LIBFABRIC
  if (m.raw) return m.raw->stop();
#endif
  SendChannel& tx = m.set->send(0);
  until([&] { return tx.try_acquire() != nullptr; });
  tx.post(0);
  until([&] { return tx.try_drain(); });
  return true;
}

void run_iteration(Medium& m, std::uint64_t bytes) {
#if CCBENCH_HAVE_LIBFABRIC
  if (m.raw) return m.raw->stream(bytes);
#endif
  stream(m, bytes);
}

// The raw medium of the group `medium` belongs to, if it is an ofi side.
std::optional<size_t> raw_of(size_t medium) {
  for (const Group& g : kGroups)
    for (size_t s : g.sides)
      if (s == medium && media()[s].transport == "ofi") return g.raw;
  return std::nullopt;
}

void BM_Channel(benchmark::State& state, size_t medium) {
  Medium& m = media()[medium];
  if (!m.usable()) {
    state.SkipWithError(m.why_not.c_str());
    return;
  }
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  const std::int64_t what[2] = {static_cast<std::int64_t>(medium), state.range(0)};
  MPI_Send(what, 2, MPI_INT64_T, 1, 0, MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) run_iteration(m, bytes);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool landed = pause(m);
  const double rate = static_cast<double>(state.iterations()) * static_cast<double>(bytes) / secs;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  const auto key = [&](size_t raw) { return std::make_tuple(raw, state.range(0), state.range(1)); };
  if (m.transport == "raw") {
    if (!landed) return state.SkipWithError("the raw loop's bytes did not land in rank 1's slots");
    raw_rates()[key(medium)] = rate;
#if CCBENCH_HAVE_LIBFABRIC
    state.SetLabel("raw " + m.raw->op());
#endif
    return;
  }
  state.SetLabel(m.set->label() + (g_copy_out ? "" : " (no copy out)"));
  if (const auto raw = raw_of(medium)) {
    const auto it = raw_rates().find(key(*raw));
    if (it != raw_rates().end()) state.counters["of_raw"] = rate / it->second;
  }
}

// Every medium's channels (or raw loop), connected on both ranks in the same order.
void connect_media(const RankLayout& layout) {
  const cpu::SlotConfig cfg = cpu::slot_config_from_env();
  const char* names[][4] = {{"tcp", "tcp", "", ""},
                            {"ofi_tcp", "ofi", "tcp", "rma"},
                            {"shm", "shm", "", ""},
                            {"ofi_shm", "ofi", "shm", "rma"},
                            {"ofi_tcp_tagged", "ofi", "tcp", "tagged"},
                            {"ofi_shm_tagged", "ofi", "shm", "tagged"},
                            {"ofi_tcp_raw", "raw", "tcp", "rma"},
                            {"ofi_shm_raw", "raw", "shm", "rma"}};
  for (const auto& n : names) media().push_back({n[0], n[1], n[2], n[3]});
  const int peer = 1 - g_rank;
  for (Medium& m : media()) {
    OfiOptions ofi;
    ofi.provider = m.provider;
    if (!m.protocol.empty()) ofi.protocol = parse_ofi_protocol(m.protocol, "protocol");
    set_ofi_options(ofi);
    ChannelOptions o;
    o.slot_bytes = cfg.slot_bytes;
    o.depth = cfg.depth;
    o.transport = m.transport;
    try {
      if (m.transport != "raw") {
        const std::vector<ChannelRequest> req = {{peer, 1, g_rank == 0}, {peer, 2, g_rank == 1}};
        m.set = connect_channels(MPI_COMM_WORLD, layout, req, o);
        continue;
      }
#if CCBENCH_HAVE_LIBFABRIC
      m.raw = OfiRawLoop::open(MPI_COMM_WORLD, layout, m.provider, o.slot_bytes, o.depth, user_buffer().data(),
                               user_buffer().size());
#else
      m.why_not = "built without libfabric";
#endif
    } catch (const Error& e) {
      m.why_not = e.what();
    }
  }
  set_ofi_options({});
}

void register_benchmarks() {
  for (std::int64_t bytes : {1 * MiB, 4 * MiB, 16 * MiB})
    for (int round = 0; round < kRounds; ++round)
      for (Group g : kGroups) {
        if (round % 2) std::reverse(g.sides.begin(), g.sides.end());  // ours first, then ofi first
        g.sides.insert(g.sides.begin(), g.raw);
        for (size_t i : g.sides)
          benchmark::RegisterBenchmark(("BM_Channel/" + media()[i].name).c_str(), BM_Channel, i)
              ->Args({bytes, round})
              ->ArgNames({"bytes", "round"})
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
      }
}

}  // namespace
}  // namespace ccbench

int main(int argc, char** argv) {
  using namespace ccbench;
  MPI_Init(&argc, &argv);
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--no-copy-out") {
      g_copy_out = false;
      std::copy(argv + i + 1, argv + argc, argv + i);
      --argc;
      break;
    }
  int n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n != 2) {
    if (g_rank == 0) std::fprintf(stderr, "ccbench_channel_bench: run it with mpirun -np 2 (here %d ranks)\n", n);
    MPI_Finalize();
    return 2;
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::vector<char> all(2 * 256);
  MPI_Allgather(host, 256, MPI_CHAR, all.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
  const RankLayout layout = RankLayout::from_hosts(g_rank, {std::string(&all[0]), std::string(&all[256])});
  connect_media(layout);
  if (g_rank == 0) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) MPI_Abort(MPI_COMM_WORLD, 2);
    register_benchmarks();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    const std::int64_t done[2] = {-1, 0};
    MPI_Send(done, 2, MPI_INT64_T, 1, 0, MPI_COMM_WORLD);
  } else {
    serve();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  media().clear();
  MPI_Finalize();
  return 0;
}
