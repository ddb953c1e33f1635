#pragma once
// CUDA IPC: device memory of one rank mapped into the address space of the other ranks of its
// node, so kernels read and write peer GPUs directly (NVLink, or PCIe peer-to-peer).
//
// Both classes are collective over `comm` (every rank constructs them in the same order) and
// need every rank of `comm` on one node. Mappings are released in the destructor.
#include <cstddef>
#include <vector>

#include <mpi.h>

namespace ccbench {

// A region of `bytes` of device memory on every rank (zeroed), visible to all of them.
class IpcRegion {
 public:
  IpcRegion(MPI_Comm comm, std::size_t bytes);
  ~IpcRegion();
  IpcRegion(const IpcRegion&) = delete;
  IpcRegion& operator=(const IpcRegion&) = delete;
  void* local() const { return ptrs_[static_cast<std::size_t>(rank_)]; }
  // Rank r's region as this rank addresses it (local() for r == own rank).
  void* of(int r) const { return ptrs_[static_cast<std::size_t>(r)]; }
  std::size_t bytes() const { return bytes_; }

 private:
  int rank_ = 0;
  std::size_t bytes_ = 0;
  std::vector<void*> ptrs_;
};

// Buffers allocated elsewhere with cudaMalloc (the harness's): every rank passes its own buffer;
// of(r) is rank r's buffer in this rank's address space.
class IpcBufferMap {
 public:
  IpcBufferMap(MPI_Comm comm, void* buffer);
  ~IpcBufferMap();
  IpcBufferMap(const IpcBufferMap&) = delete;
  IpcBufferMap& operator=(const IpcBufferMap&) = delete;
  void* of(int r) const { return ptrs_[static_cast<std::size_t>(r)]; }

 private:
  int rank_ = 0;
  std::vector<void*> ptrs_;   // rank r's buffer
  std::vector<void*> bases_;  // opened allocation bases (nullptr for the own rank)
};

}  // namespace ccbench
