#pragma once
// CUDA IPC: device memory of one rank mapped into the address space of other ranks of its node,
// so kernels read and write peer GPUs directly (NVLink, PCIe peer-to-peer, or a GPU the ranks
// share).
//
// Which peers: a rank maps only the ranks it is given, the peers its kernel addresses (the Bruck
// all-gather's log2(n) peers, a FIFO's two ends), never every rank of the node unless the kernel
// reads them all: CUDA maps a bounded number of peers per GPU (8 over PCIe), and each mapping
// costs the driver. A mapping that fails on any rank ends the set-up on every rank with one error
// naming the rank and the peer (agreement.h), never a rank left waiting for the others.
//
// Teardown order: memory is freed only once every rank that mapped it has closed its mapping
// (freeing exported memory before the importers close it is undefined in CUDA): close the
// imports, a barrier, then free. IpcRegion's destructor does all three; IpcBufferMap does not own
// its buffer, so the owner closes every rank's maps and passes a barrier before freeing it.
//
// Every import of the process goes through ipc_open() and ipc_close(), which keep the count of
// what is open (ipc_imports()): a failed open says how many mappings the process holds, and the
// tests check which peers a schedule maps and that teardown closed them before anyone freed.
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <mpi.h>

namespace ccbench {

// What an import maps, for ipc_imports() and messages.
enum class IpcKind { fifos, scratch, buffer };
const char* name(IpcKind k);  // "FIFO memory", "scratch memory", "buffer"

// Maps `handle`, rank `peer`'s memory of kind `kind` (peer: its rank in MPI_COMM_WORLD), into this
// process. Throws Error(precondition) naming the peer, CUDA's error and the mappings already open.
void* ipc_open(const cudaIpcMemHandle_t& handle, int peer, IpcKind kind);
// Closes a mapping ipc_open() made. Never throws (teardown); CUDA's error is left unchecked.
void ipc_close(void* mapped);

// The mappings this process holds, and when the last one was closed (steady clock: on Linux
// CLOCK_MONOTONIC, the same in every process of the host).
struct IpcImport {
  int peer = -1;  // rank in MPI_COMM_WORLD
  IpcKind kind = IpcKind::buffer;
};
struct IpcImports {
  std::vector<IpcImport> open;
  std::chrono::steady_clock::time_point last_close{};  // epoch where none was closed yet
};
IpcImports ipc_imports();

// Rank r of `comm` in MPI_COMM_WORLD (what ipc_open() takes).
int world_rank(MPI_Comm comm, int r);
// The ranks of `comm` other than this one, ascending: what a kernel that addresses every rank maps.
std::vector<int> other_ranks(MPI_Comm comm);

// A region of `bytes` of device memory on every rank (zeroed), mapped by the ranks that ask for it.
class IpcRegion {
 public:
  // Collective over `comm`: allocates and zeroes this rank's region, and maps those of `peers`
  // (ranks of `comm`, not this one). When a mapping fails on any rank, every rank throws the same
  // Error::agreed(precondition) naming the rank and the peer. On return every rank has mapped
  // its peers (a peer's region is zeroed before anyone can write it).
  IpcRegion(MPI_Comm comm, std::size_t bytes, const std::vector<int>& peers);
  // Collective, unless an exception is in flight or MPI has ended: closes this rank's mappings,
  // waits until every rank has closed its own (MPI_Barrier), then frees the region. Unwinding
  // from an error, the region is left to the process's end instead: a peer may still map it.
  ~IpcRegion();
  IpcRegion(const IpcRegion&) = delete;
  IpcRegion& operator=(const IpcRegion&) = delete;
  void* local() const { return ptrs_[static_cast<std::size_t>(rank_)]; }
  // Rank r's region as this rank addresses it: local() for this rank, null for a rank not mapped.
  void* of(int r) const { return ptrs_[static_cast<std::size_t>(r)]; }
  std::size_t bytes() const { return bytes_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  std::size_t bytes_ = 0;
  std::vector<void*> ptrs_;
};

// Buffers allocated elsewhere with cudaMalloc (the harness's): every rank passes its own buffer;
// of(r) is rank r's buffer in this rank's address space, for the ranks in `peers`.
class IpcBufferMap {
 public:
  // Collective over `comm`; a failed mapping as IpcRegion's.
  IpcBufferMap(MPI_Comm comm, void* buffer, const std::vector<int>& peers);
  // Closes this rank's mappings (local). The owner of a buffer frees it only once every rank has
  // destroyed its map of it and passed a barrier (PeerState::detach).
  ~IpcBufferMap();
  IpcBufferMap(const IpcBufferMap&) = delete;
  IpcBufferMap& operator=(const IpcBufferMap&) = delete;
  // Rank r's buffer: the buffer itself for this rank, null for a rank not mapped.
  void* of(int r) const { return ptrs_[static_cast<std::size_t>(r)]; }

 private:
  std::vector<void*> ptrs_;   // rank r's buffer
  std::vector<void*> bases_;  // opened allocation bases (null for this rank and ranks not mapped)
};

// Whether a collective teardown may run here: no exception in flight (every rank is tearing down
// at the same point) and MPI still running.
bool collective_teardown_allowed();

}  // namespace ccbench
