// CPU channel micro-benchmark (Google Benchmark) under `mpirun -np 2`: rank 0 streams bytes to
// rank 1 over one channel of each transport, as the CPU executors drive them (slots acquired,
// filled by a copy, posted; peeked, copied out and released), and waits for rank 1's
// acknowledgement at the end of every iteration. Compares the ofi transport (libfabric) with ccbench's own over the same medium:
//   BM_Channel/tcp/<bytes>/<round>        ccbench's tcp transport over loopback
//   BM_Channel/ofi_tcp/<bytes>/<round>    ofi over tcp;ofi_rxm (rma), loopback
//   BM_Channel/shm/<bytes>/<round>        ccbench's shared-memory transport
//   BM_Channel/ofi_shm/<bytes>/<round>    ofi over libfabric's shm provider (rma)
//   BM_Channel/ofi_*_tagged/...           the same providers with tagged messages
// Each group is registered side by side and rounds alternate the order (ofi first in odd rounds),
// so that load on a shared machine falls on both sides alike; scripts/ofi_compare.py takes the
// best of the rounds. Slots as the CPU implementations use them (CCBENCH_CPU_SLOT_BYTES / _DEPTH,
// 256 KiB x 4 by default). bytes_per_second counts each byte once.
// Run: mpirun -np 2 build/ccbench_channel_bench --benchmark_out=channels.json --benchmark_out_format=json
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <mpi.h>
#include <unistd.h>

#include "collectives/cpu/cpu_common.h"
#include "core/error.h"
#include "transports/connect.h"
#include "transports/ofi/ofi_transport.h"

namespace ccbench {
namespace {

constexpr std::int64_t MiB = 1 << 20;
constexpr int kRounds = 3;
// Control words in the first 16 bytes of an iteration's first slot: the bytes that follow, or
// kStop when rank 0 is done with the channel.
constexpr std::uint64_t kStop = ~0ull;

struct Medium {
  std::string name;       // the benchmark's name
  std::string transport;  // connect_channels' transport
  std::string provider;   // ofi: --ofi-provider
  std::string protocol;   // ofi: --ofi-protocol
  std::unique_ptr<ChannelSet> set;  // request 0: rank 0 -> 1 data; request 1: rank 1 -> 0 acks
  std::string why_not;    // set-up failed: the benchmark is skipped with this
};

std::vector<Medium>& media() {
  static std::vector<Medium> m;
  return m;
}

int g_rank = 0;

// Spins on f(); the channels are non-blocking.
template <typename F>
void until(F&& f) {
  while (!f()) {
  }
}

// The bytes each side copies into a slot and out of one, as the executors' copies do: a buffer
// past the last-level cache, so that every copy goes to memory as a collective's would.
std::vector<char>& user_buffer() {
  static std::vector<char> b(64 * MiB, 1);
  return b;
}

// Rank 0's side of one iteration: `bytes` copied into slots and posted, then the acknowledgement.
void stream(Medium& m, std::uint64_t bytes) {
  SendChannel& tx = m.set->send(0);
  RecvChannel& rx = m.set->recv(1);
  const size_t slot = tx.slot_bytes();
  const char* from = user_buffer().data();
  std::uint64_t left = bytes;
  bool first = true;
  while (first || left > 0) {
    void* p = nullptr;
    until([&] { return (p = tx.try_acquire()) != nullptr; });
    size_t n = static_cast<size_t>(std::min<std::uint64_t>(left, slot));
    std::memcpy(p, from + (bytes - left) % (user_buffer().size() - slot), n);
    if (first) {
      std::memcpy(p, &bytes, sizeof bytes);
      n = std::max<size_t>(n, sizeof bytes);
      first = false;
    }
    tx.post(n);
    left -= std::min<std::uint64_t>(left, n);
  }
  size_t n = 0;
  until([&] { return rx.try_peek(&n) != nullptr; });
  rx.release();
}

// Rank 1: serves the medium rank 0 names (over MPI, before each benchmark run) until rank 0 ends
// the run with kStop over the channel itself; -1 ends the program. Only the channel in use is
// polled, as a rank of a collective polls its own channels.
void serve() {
  for (;;) {
    int medium = -1;
    MPI_Recv(&medium, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (medium < 0) return;
    Medium& m = media()[static_cast<size_t>(medium)];
    RecvChannel& rx = m.set->recv(0);
    SendChannel& tx = m.set->send(1);
    std::uint64_t owed = 0, copied = 0;
    for (bool running = true; running;) {
      size_t n = 0;
      const void* p = rx.try_peek(&n);
      if (!p) continue;
      if (owed == 0) {  // an iteration's first slot
        std::uint64_t bytes = 0;
        std::memcpy(&bytes, p, sizeof bytes);
        if (bytes == kStop) {
          rx.release();
          running = false;
          continue;
        }
        owed = std::max<std::uint64_t>(bytes, sizeof bytes);
      }
      std::memcpy(user_buffer().data() + (copied % (user_buffer().size() - n)), p, n);
      copied += n;
      owed -= std::min<std::uint64_t>(owed, n);
      rx.release();
      if (owed == 0) {
        void* q = nullptr;
        until([&] { return (q = tx.try_acquire()) != nullptr; });
        tx.post(8);
      }
    }
    until([&] { return tx.try_drain(); });
  }
}

// Rank 0: ends rank 1's service of `m` (kStop over its channel).
void pause(Medium& m) {
  SendChannel& tx = m.set->send(0);
  void* p = nullptr;
  until([&] { return (p = tx.try_acquire()) != nullptr; });
  std::memcpy(p, &kStop, sizeof kStop);
  tx.post(sizeof kStop);
  until([&] { return tx.try_drain(); });
}

void BM_Channel(benchmark::State& state, size_t medium) {
  Medium& m = media()[medium];
  if (!m.set) {
    state.SkipWithError(m.why_not.c_str());
    return;
  }
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  int which = static_cast<int>(medium);
  MPI_Send(&which, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  for (auto _ : state) stream(m, bytes);
  pause(m);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  state.SetLabel(m.set->label());
}

// Every medium's channels, connected on both ranks in the same order.
void connect_media(const RankLayout& layout) {
  const cpu::SlotConfig cfg = cpu::slot_config_from_env();
  const char* names[][4] = {{"tcp", "tcp", "", ""},         {"ofi_tcp", "ofi", "tcp", "rma"},
                            {"shm", "shm", "", ""},         {"ofi_shm", "ofi", "shm", "rma"},
                            {"ofi_tcp_tagged", "ofi", "tcp", "tagged"}, {"ofi_shm_tagged", "ofi", "shm", "tagged"}};
  for (const auto& n : names) media().push_back({n[0], n[1], n[2], n[3], nullptr, ""});
  const int peer = 1 - g_rank;
  for (Medium& m : media()) {
    ChannelOptions o;
    o.slot_bytes = cfg.slot_bytes;
    o.depth = cfg.depth;
    o.transport = m.transport;
    OfiOptions ofi;
    ofi.provider = m.provider;
    if (!m.protocol.empty()) ofi.protocol = parse_ofi_protocol(m.protocol, "protocol");
    set_ofi_options(ofi);
    const std::vector<ChannelRequest> req = {{peer, 1, g_rank == 0}, {peer, 2, g_rank == 1}};
    try {
      m.set = connect_channels(MPI_COMM_WORLD, layout, req, o);
    } catch (const Error& e) {
      m.why_not = e.what();
    }
  }
}

void register_benchmarks() {
  for (std::int64_t bytes : {1 * MiB, 4 * MiB, 16 * MiB})
    for (int round = 0; round < kRounds; ++round)
      for (std::vector<size_t> group : {std::vector<size_t>{0, 1, 4}, std::vector<size_t>{2, 3, 5}}) {
        if (round % 2) std::reverse(group.begin(), group.end());  // ours first, then ofi first
        for (size_t i : group)
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
    int done = -1;
    MPI_Send(&done, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    serve();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  media().clear();
  MPI_Finalize();
  return 0;
}
