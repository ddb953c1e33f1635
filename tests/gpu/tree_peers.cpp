// Which peers our GPU tree maps over p2p (CUDA IPC), as the process's imports show them
// (transports/gpu/cuda_ipc.h: ipc_imports(), kept where every CUDA IPC handle is opened and closed):
//   after set-up       the FIFO memory of its two trees' parents and children, nothing else;
//   all-reduce series  still no peer's scratch memory or buffer: the all-reduce moves its data
//                      through the FIFOs;
//   all-gather series  the scratch memory and receive buffer of rank - 2^k for each Bruck round k
//                      (schedule::bruck_peers: ceil(log2 n) ranks), each once, never every rank;
//   after detach()     no peer's buffer; once the implementation is gone, nothing at all;
//   a refused mapping  (rank 1 asks CUDA for its own buffer, which CUDA refuses) one agreed error
//                      on every rank at once, exit code 3, naming rank 1 and the peer; nothing
//                      left mapped.
// CUDA maps a bounded number of peers per GPU (8 over PCIe): mapping every rank of a 16-GPU node
// fails there. Each collective's every element is checked. Run under mpirun with 4 or more ranks
// on one GPU (label gpu1: IPC between processes of one device). Exit 0 when every rank maps
// exactly these and every element is exact, 1 naming the rank, what and the sets that differ, 77
// without a GPU.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collectives/implementation.h"
#include "collectives/schedules/tree.h"
#include "core/checks_cuda.h"
#include "core/error.h"
#include "tests/gpu/direct_rank.h"
#include "transports/gpu/cuda_ipc.h"

namespace {

using namespace ccbench;

constexpr std::size_t kCount = 16 << 10;  // floats per rank: several 64 KiB slots per tree

using Peers = std::multiset<int>;  // a peer mapped twice shows twice

std::map<IpcKind, Peers> imports() {
  std::map<IpcKind, Peers> by_kind;
  for (IpcKind k : {IpcKind::fifos, IpcKind::scratch, IpcKind::buffer}) by_kind[k];
  for (const IpcImport& i : ipc_imports().open) by_kind[i.kind].insert(i.peer);
  return by_kind;
}

// rank - 2^k for every round, computed here from the rounds' distances (not from bruck_peers).
Peers bruck_peers(int rank, int n) {
  Peers peers;
  for (int dist = 1; dist < n; dist *= 2) peers.insert(((rank - dist) % n + n) % n);
  return peers;
}

class Check {
 public:
  explicit Check(int rank) : rank_(rank) {}
  // The process's imports of each kind must be `fifos`, `scratch` and `buffers` at `when`.
  void mapped(const char* when, const Peers& fifos, const Peers& scratch, const Peers& buffers) {
    auto got = imports();
    for (const auto& [kind, want] : std::map<IpcKind, Peers>{
             {IpcKind::fifos, fifos}, {IpcKind::scratch, scratch}, {IpcKind::buffer, buffers}}) {
      ++checks_;
      if (got[kind] == want) continue;
      ++failures_;
      const std::string have = fmt::format("{}", fmt::join(got[kind], ",")), should = fmt::format("{}", fmt::join(want, ","));
      std::printf("rank %d, %s: maps the %s of ranks {%s}; the schedule's peers are {%s}\n", rank_, when, name(kind),
                  have.c_str(), should.c_str());
    }
  }
  void that(bool ok, const std::string& what) {
    ++checks_;
    if (ok) return;
    ++failures_;
    std::printf("rank %d: %s\n", rank_, what.c_str());
  }
  void exact(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
    ++checks_;
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i]) {
        ++failures_;
        std::printf("rank %d %s: element %zu expected %g got %g\n", rank_, what, i, want[i], got[i]);
        return;
      }
  }
  int failures() const { return failures_; }
  int checks() const { return checks_; }

 private:
  int rank_;
  int checks_ = 0, failures_ = 0;
};

float input(int rank, std::size_t i) { return static_cast<float>((i * 7 + static_cast<std::size_t>(rank) * 3) % 29); }

// One call of `coll` on fresh buffers attached for it; returns the receive buffer's contents.
std::vector<float> one_call(Implementation& impl, Collective coll, ImplContext& ctx, int rank, int n, Check& check,
                            const Peers& fifos, const Peers& bruck) {
  const std::size_t out_count = coll == Collective::allgather ? kCount * static_cast<std::size_t>(n) : kCount;
  float *send, *recv;
  CCB_CUDA(cudaMalloc(&send, kCount * sizeof(float)));
  CCB_CUDA(cudaMalloc(&recv, out_count * sizeof(float)));
  std::vector<float> host(kCount);
  for (std::size_t i = 0; i < kCount; ++i) host[i] = input(rank, i);
  CCB_CUDA(cudaMemcpy(send, host.data(), kCount * sizeof(float), cudaMemcpyHostToDevice));
  impl.attach(BufferSet{send, kCount * sizeof(float), recv, out_count * sizeof(float), coll});
  const bool gather = coll == Collective::allgather;
  check.mapped(gather ? "all-gather attached" : "all-reduce attached", fifos, gather ? bruck : Peers{},
               gather ? bruck : Peers{});
  MPI_Barrier(MPI_COMM_WORLD);
  impl.run(CallArgs{CaseSpec{coll, DataType::float32, gather ? ReduceOp::none : ReduceOp::sum, 0}, send, recv, kCount});
  CCB_CUDA(cudaStreamSynchronize(static_cast<cudaStream_t>(ctx.stream)));
  impl.check_async_errors();
  std::vector<float> out(out_count);
  CCB_CUDA(cudaMemcpy(out.data(), recv, out_count * sizeof(float), cudaMemcpyDeviceToHost));
  impl.detach();
  check.mapped(gather ? "all-gather detached" : "all-reduce detached", fifos, gather ? bruck : Peers{}, Peers{});
  cudaFree(send);
  cudaFree(recv);
  return out;
}

// A mapping CUDA refuses on one rank: rank 1 also asks for its own buffer (the refusal CUDA gives
// on demand: a process cannot open a handle it exported). Every rank must throw the same agreed
// error, exit code 3, naming rank 1 and the peer, at once (no rank waits in a barrier), with every
// mapping the others made closed again.
void refused_mapping(int rank, int n, Check& check) {
  float* buffer;
  CCB_CUDA(cudaMalloc(&buffer, 4096));
  std::vector<int> peers;
  for (int r = 0; r < n; ++r)
    if (r != rank || rank == 1) peers.push_back(r);
  const auto t0 = std::chrono::steady_clock::now();
  std::string got = "no error";
  try {
    IpcBufferMap map(MPI_COMM_WORLD, buffer, peers);
  } catch (const Error& e) {
    got = fmt::format("{} (code {}, {})", e.what(), static_cast<int>(e.code()), e.is_agreed() ? "agreed" : "this rank's");
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string want = "rank 1: cannot map rank 1's GPU buffer with CUDA IPC (";
  check.that(got.rfind(want, 0) == 0 && got.find("(code 3, agreed)") != std::string::npos,
             fmt::format("a refused mapping: got '{}', expected '{}...' (code 3, agreed)", got, want));
  check.that(s < 10, fmt::format("a refused mapping took {:.1f} s to reach every rank", s));
  check.mapped("after a refused mapping", {}, {}, {});
  if (rank == 0) std::printf("# a refused mapping, on every rank after %.3f s: %s\n", s, got.c_str());
  cudaFree(buffer);
}

int run(int rank, int n) {
  if (n < 4) throw Error(ExitCode::usage, fmt::format("tree peers: needs 4 or more ranks, got {}", n));
  direct::DirectRank me(rank, n, "p2p", std::chrono::seconds(60));
  const ImplInfo* info = find_implementation(ImplId::tree, Device::gpu);
  if (!info || !info->make) throw Error(ExitCode::precondition, "tree is not built in");
  Check check(rank);
  const std::set<int> tree = direct::tree_peers(rank, n);
  const Peers fifos(tree.begin(), tree.end()), bruck = bruck_peers(rank, n);
  {
    auto impl = info->make();
    impl->setup(me.ctx);
    check.mapped("set up", fifos, {}, {});
    const std::vector<float> sum = one_call(*impl, Collective::allreduce, me.ctx, rank, n, check, fifos, bruck);
    std::vector<float> want(kCount, 0);
    for (std::size_t i = 0; i < kCount; ++i)
      for (int r = 0; r < n; ++r) want[i] += input(r, i);
    check.exact("all-reduce", sum, want);
    const std::vector<float> all = one_call(*impl, Collective::allgather, me.ctx, rank, n, check, fifos, bruck);
    want.assign(kCount * static_cast<std::size_t>(n), 0);
    for (int r = 0; r < n; ++r)
      for (std::size_t i = 0; i < kCount; ++i) want[static_cast<std::size_t>(r) * kCount + i] = input(r, i);
    check.exact("all-gather", all, want);
  }
  check.mapped("torn down", {}, {}, {});
  refused_mapping(rank, n, check);
  int failures = check.failures(), total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("tree peers: %d ranks over p2p, %d checks per rank: %s\n", n, check.checks(),
                total ? "FAILED"
                      : fmt::format("ok: each rank maps the FIFO memory of its trees' parents and children, the "
                                    "scratch memory and receive buffer of its {} Bruck peers for an all-gather only, "
                                    "no peer's for an all-reduce; every element exact; a refused mapping is one "
                                    "agreed error on every rank",
                                    bruck.size())
                            .c_str());
  return total ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) { return ccbench::direct::mpi_main(argc, argv, run); }
