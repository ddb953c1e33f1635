#include "transports/gpu/cuda_ipc.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <utility>

#include "core/checks.h"
#include "core/checks_cuda.h"
#include "core/error.h"
#include "transports/agreement.h"

namespace ccbench {

namespace {

// Every mapping ipc_open() made and ipc_close() has not closed yet. CUDA returns the same pointer
// for a handle opened twice (and counts the opens): one entry per open.
struct Registry {
  std::mutex mutex;
  std::multimap<void*, IpcImport> open;
  std::chrono::steady_clock::time_point last_close{};
};
Registry& registry() {
  static Registry r;
  return r;
}

struct Exported {
  cudaIpcMemHandle_t handle;
  std::uint64_t offset;  // of the buffer within its allocation
};

std::vector<Exported> exchange(MPI_Comm comm, const Exported& mine) {
  int size = 1;
  CCB_MPI(MPI_Comm_size(comm, &size));
  std::vector<Exported> all(static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm),
            "MPI_Allgather of CUDA IPC handles");
  return all;
}

// Opens the handles of `peers` (ranks of `comm`) into `bases`, agreed over `comm`. When a mapping
// fails on any rank, every rank closes what it opened and passes a barrier before the agreed
// error goes on, so that the owners may free their memory.
void open_agreed(MPI_Comm comm, const std::vector<Exported>& all, const std::vector<int>& peers, IpcKind kind,
                 std::vector<void*>& bases) {
  try {
    run_agreed(comm, [&] {
      for (int r : peers) {
        const auto i = static_cast<std::size_t>(r);
        bases[i] = ipc_open(all[i].handle, world_rank(comm, r), kind);
      }
    });
  } catch (const Error& e) {
    for (void*& b : bases)
      if (b) ipc_close(std::exchange(b, nullptr));
    if (e.is_agreed()) check_mpi(MPI_Barrier(comm), "MPI_Barrier after closing CUDA IPC mappings");
    throw;
  }
}

// cuMemGetAddressRange through the runtime's driver entry point: no link-time dependency on
// libcuda, so the binary still starts on machines without a GPU driver.
void allocation_of(const void* ptr, std::uintptr_t* base) {
  using Fn = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  static Fn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, kDriverApiVersion, cudaEnableDefault, &status) !=
            cudaSuccess ||
        status != cudaDriverEntryPointSuccess)
      f = nullptr;
    return reinterpret_cast<Fn>(f);
  }();
  CUdeviceptr b = 0;
  size_t size = 0;
  if (!fn || fn(&b, &size, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS)
    fail(ExitCode::runtime, "cannot find the allocation of a buffer given to CUDA IPC (cuMemGetAddressRange)");
  *base = static_cast<std::uintptr_t>(b);
}

}  // namespace

const char* name(IpcKind k) {
  switch (k) {
    case IpcKind::fifos: return "FIFO memory";
    case IpcKind::scratch: return "scratch memory";
    case IpcKind::buffer: return "buffer";
  }
  return "memory";
}

void* ipc_open(const cudaIpcMemHandle_t& handle, int peer, IpcKind kind) {
  void* p = nullptr;
  const cudaError_t rc = cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess);
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();  // clears the error so that later calls do not report it
    fail(ExitCode::precondition,
         "cannot map rank {}'s GPU {} with CUDA IPC ({}: {}; this process holds {} CUDA IPC mappings): the GPUs must "
         "be on one node with peer access (NVLink or PCIe peer-to-peer); --transport host stages our ring and tree "
         "through pinned host memory instead",
         peer, name(kind), cudaGetErrorName(rc), cudaGetErrorString(rc), reg.open.size());
  }
  reg.open.emplace(p, IpcImport{peer, kind});
  return p;
}

void ipc_close(void* mapped) {
  (void)cudaIpcCloseMemHandle(mapped);
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  if (const auto it = reg.open.find(mapped); it != reg.open.end()) reg.open.erase(it);
  reg.last_close = std::chrono::steady_clock::now();
}

IpcImports ipc_imports() {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  IpcImports out;
  for (const auto& [ptr, import] : reg.open) out.open.push_back(import);
  out.last_close = reg.last_close;
  return out;
}

int world_rank(MPI_Comm comm, int r) {
  MPI_Group group, world;
  CCB_MPI(MPI_Comm_group(comm, &group));
  CCB_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int out = MPI_UNDEFINED;
  CCB_MPI(MPI_Group_translate_ranks(group, 1, &r, world, &out));
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  return out;
}

std::vector<int> other_ranks(MPI_Comm comm) {
  int rank = 0, size = 1;
  CCB_MPI(MPI_Comm_rank(comm, &rank));
  CCB_MPI(MPI_Comm_size(comm, &size));
  std::vector<int> peers;
  for (int r = 0; r < size; ++r)
    if (r != rank) peers.push_back(r);
  return peers;
}

bool collective_teardown_allowed() {
  int finalized = 1;
  return std::uncaught_exceptions() == 0 && MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized;
}

IpcRegion::IpcRegion(MPI_Comm comm, std::size_t bytes, const std::vector<int>& peers) : comm_(comm), bytes_(bytes) {
  int size = 1;
  CCB_MPI(MPI_Comm_rank(comm, &rank_));
  CCB_MPI(MPI_Comm_size(comm, &size));
  ptrs_.assign(static_cast<std::size_t>(size), nullptr);
  void* mine = nullptr;
  try {
    Exported e{};
    run_agreed(comm, [&] {  // an allocation refused on one rank: its peers must not wait in the exchange
      CCB_CUDA(cudaMalloc(&mine, bytes));
      CCB_CUDA(cudaMemset(mine, 0, bytes));
      CCB_CUDA(cudaDeviceSynchronize());  // zeroed before any peer can map it
      CCB_CUDA(cudaIpcGetMemHandle(&e.handle, mine));
    });
    open_agreed(comm, exchange(comm, e), peers, IpcKind::scratch, ptrs_);
  } catch (const Error& e) {
    // Agreed: no rank maps this region any more (open_agreed's barrier). Otherwise a peer may.
    if (mine && e.is_agreed()) (void)cudaFree(mine);
    throw;
  }
  ptrs_[static_cast<std::size_t>(rank_)] = mine;
}

IpcRegion::~IpcRegion() {
  for (std::size_t r = 0; r < ptrs_.size(); ++r)
    if (static_cast<int>(r) != rank_ && ptrs_[r]) ipc_close(ptrs_[r]);
  // Destructors cannot report: a failed barrier leaves the region to the process's end.
  if (collective_teardown_allowed() && MPI_Barrier(comm_) == MPI_SUCCESS) (void)cudaFree(local());
}

IpcBufferMap::IpcBufferMap(MPI_Comm comm, void* buffer, const std::vector<int>& peers) {
  int rank = 0, size = 1;
  CCB_MPI(MPI_Comm_rank(comm, &rank));
  CCB_MPI(MPI_Comm_size(comm, &size));
  Exported e{};
  run_agreed(comm, [&] {
    std::uintptr_t base = 0;
    allocation_of(buffer, &base);
    e.offset = reinterpret_cast<std::uintptr_t>(buffer) - base;
    CCB_CUDA(cudaIpcGetMemHandle(&e.handle, reinterpret_cast<void*>(base)));
  });
  const auto all = exchange(comm, e);
  bases_.assign(static_cast<std::size_t>(size), nullptr);
  open_agreed(comm, all, peers, IpcKind::buffer, bases_);
  ptrs_.assign(static_cast<std::size_t>(size), nullptr);
  for (int r : peers) {
    const auto i = static_cast<std::size_t>(r);
    ptrs_[i] = static_cast<char*>(bases_[i]) + all[i].offset;
  }
  ptrs_[static_cast<std::size_t>(rank)] = buffer;
}

IpcBufferMap::~IpcBufferMap() {
  for (void* b : bases_)
    if (b) ipc_close(b);
}

}  // namespace ccbench
