// The net transport's proxy (transports/gpu/gpu_net.h) under mpirun without a GPU: this process plays
// the GPU's side of the FIFO contract (gpu_conn.h) in host memory — a sender that fills staging
// slots, writes each step's size and publishes tail, a receiver that waits for tail, checks every
// byte and frees the slot with head — while the proxy thread moves the steps to the next rank over
// real tcp connections. Steps are of every size from 0 to a whole slot; only a step's bytes may
// arrive (the rest of a receiving slot keeps the filler the receiver wrote after its last use).
// Every rank sends to the next and receives from the previous on several FIFOs at once, for many
// more steps than slots (flow control both ways). Exits 1 if any rank saw a wrong byte, a
// stalled FIFO or an error.
//
// Usage: net_proxy_test [tcp|ib]. tcp (the default) also checks, where no rank has a usable RDMA
// port, that a proxy over ib refuses at set-up with exit code 3 and ib_unavailable_reason(). ib
// moves the same steps over RDMA WRITEs between the FIFO slots (label rdma), and prints
// "SKIPPED: <reason>" without a usable port.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <mpi.h>

#include "core/error.h"
#include "transports/gpu/gpu_conn.h"
#include "transports/gpu/gpu_net.h"
#include "transports/ib/ib_transport.h"

namespace {

using namespace ccbench;
constexpr int kFifos = 3;
constexpr std::size_t kSlot = 8192;
constexpr std::uint64_t kSteps = 300;

constexpr char kFiller = 0x6b;

// One FIFO's memory: slots plus its tail, head and step sizes on their own lines.
struct Fifo {
  std::vector<char> slots = std::vector<char>(gpu::kFifoSlots * kSlot, kFiller);
  alignas(128) volatile std::uint64_t tail = 0;
  alignas(128) volatile std::uint64_t head = 0;
  alignas(128) volatile std::uint64_t sizes[gpu::kFifoSlots] = {};
};

// Empty, one byte, whole slots and odd sizes in between.
std::size_t step_bytes(int fifo, std::uint64_t step) {
  switch ((step + static_cast<std::uint64_t>(fifo)) % 6) {
    case 0: return 0;
    case 1: return 1;
    case 2: return kSlot;
    default: return (step * 7919 + 13) % kSlot | 1;
  }
}

unsigned char pattern(int from, int fifo, std::uint64_t step, std::size_t i) {
  return static_cast<unsigned char>(from * 31 + fifo * 7 + step * 13 + i);
}

RankLayout one_host_layout(int rank, int n) {
  return RankLayout::from_hosts(rank, std::vector<std::string>(static_cast<std::size_t>(n), "h"));
}

int run(int rank, int n, const NetBackend& backend) {
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  std::vector<Fifo> out(kFifos), in(kFifos);
  std::vector<NetFifo> sends, recvs;
  for (int f = 0; f < kFifos; ++f) {
    sends.push_back({next, f, out[f].slots.data(), &out[f].tail, &out[f].head, out[f].sizes});
    recvs.push_back({prev, f, in[f].slots.data(), &in[f].tail, &in[f].head});
  }
  NetProxy proxy(MPI_COMM_WORLD, one_host_layout(rank, n), kSlot, sends, recvs, std::chrono::seconds(30), backend);
  std::vector<std::uint64_t> sent(kFifos, 0), got(kFifos, 0);
  long wrong = 0, past_size = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (bool done = false; !done;) {
    done = true;
    for (int f = 0; f < kFifos; ++f) {
      // Sender: a free slot (head) -> fill -> tail.
      if (sent[f] < kSteps && sent[f] < host_load_acquire(&out[f].head) + gpu::kFifoSlots) {
        char* slot = out[f].slots.data() + (sent[f] % gpu::kFifoSlots) * kSlot;
        const std::size_t bytes = step_bytes(f, sent[f]);
        for (std::size_t i = 0; i < kSlot; ++i) slot[i] = static_cast<char>(pattern(rank, f, sent[f], i));
        out[f].sizes[sent[f] % gpu::kFifoSlots] = bytes;
        host_store_release(&out[f].tail, ++sent[f]);
      }
      // Receiver: data (tail) -> check -> head.
      if (got[f] < kSteps && got[f] < host_load_acquire(&in[f].tail)) {
        char* slot = in[f].slots.data() + (got[f] % gpu::kFifoSlots) * kSlot;
        const std::size_t bytes = step_bytes(f, got[f]);
        for (std::size_t i = 0; i < bytes; ++i)
          if (static_cast<unsigned char>(slot[i]) != pattern(prev, f, got[f], i)) ++wrong;
        for (std::size_t i = bytes; i < kSlot; ++i) past_size += slot[i] != kFiller;
        std::memset(slot, kFiller, kSlot);
        host_store_release(&in[f].head, ++got[f]);
      }
      done = done && sent[f] == kSteps && got[f] == kSteps;
    }
    proxy.check();
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "rank %d: FIFOs stalled: sent %llu, received %llu of %llu on FIFO 0\n", rank,
                   static_cast<unsigned long long>(sent[0]), static_cast<unsigned long long>(got[0]),
                   static_cast<unsigned long long>(kSteps));
      return 1;
    }
  }
  // Every rank's proxy must still be running until every peer received everything.
  MPI_Barrier(MPI_COMM_WORLD);
  if (wrong) std::fprintf(stderr, "rank %d: %ld wrong bytes from rank %d\n", rank, wrong, prev);
  if (past_size) std::fprintf(stderr, "rank %d: %ld bytes written past the steps' sizes\n", rank, past_size);
  return wrong || past_size ? 1 : 0;
}

// Without a usable RDMA port on some rank, a proxy over ib must refuse at set-up, on every rank,
// with exit code 3 (precondition) and the reason. Returns 1 when it does not.
int ib_refused_without_device(int rank, int n, const std::string& why) {
  std::vector<Fifo> out(1), in(1);
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  std::vector<NetFifo> sends{{next, 0, out[0].slots.data(), &out[0].tail, &out[0].head, out[0].sizes}};
  std::vector<NetFifo> recvs{{prev, 0, in[0].slots.data(), &in[0].tail, &in[0].head}};
  try {
    NetProxy proxy(MPI_COMM_WORLD, one_host_layout(rank, n), kSlot, sends, recvs, std::chrono::seconds(30),
                   NetBackend{"ib", -1});
    std::fprintf(stderr, "rank %d: a net proxy over ib started without a usable RDMA port (%s)\n", rank, why.c_str());
    return 1;
  } catch (const Error& e) {
    const std::string text = e.what();
    if (e.code() != ExitCode::precondition || text.find(why) == std::string::npos) {
      std::fprintf(stderr, "rank %d: net proxy over ib without a port: exit code %d '%s', expected 3 naming '%s'\n",
                   rank, static_cast<int>(e.code()), text.c_str(), why.c_str());
      return 1;
    }
    if (rank == 0) std::printf("net proxy over ib refused (exit code 3): %s\n", text.c_str());
    return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const std::string backend = argc > 1 ? argv[1] : "tcp";
  int rc = 0;
  try {
    const std::optional<std::string> no_ib = agreed_ib_unavailable_reason(MPI_COMM_WORLD, one_host_layout(rank, n));
    if (backend == "ib" && no_ib) {
      if (rank == 0) std::printf("SKIPPED: net proxy over ib: %s\n", no_ib->c_str());
      MPI_Finalize();
      return 0;
    }
    if (backend == "tcp" && no_ib) rc = ib_refused_without_device(rank, n, *no_ib);
    if (!rc) rc = run(rank, n, NetBackend{backend, -1});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    rc = 1;
  }
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("net proxy over %s: %d FIFOs x %llu steps per rank pair, %d I/O thread(s) per rank: %s\n",
                backend.c_str(), kFifos, static_cast<unsigned long long>(kSteps), net_proxy_threads(),
                worst ? "FAILED" : "ok");
  MPI_Finalize();
  return worst;
}
