#include "transports/cuda_ipc.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/checks.h"
#include "core/checks_cuda.h"
#include "core/error.h"

namespace ccbench {

namespace {

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

// The driver API version whose cuMemGetAddressRange (the _v2 entry point) we call: CUDA 12.0.
constexpr unsigned kDriverApiVersion = 12000;

// cuMemGetAddressRange through the runtime's driver entry point: no link-time dependency on
// libcuda, so the binary still starts on machines without a GPU driver.
void allocation_of(const void* ptr, std::uintptr_t* base) {
  using Fn = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  static Fn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, kDriverApiVersion, cudaEnableDefault, &status) != cudaSuccess ||
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

void* open_handle(const cudaIpcMemHandle_t& h, int peer) {
  void* p = nullptr;
  cudaError_t rc = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();  // clears the sticky-free error so later calls do not report it
    fail(ExitCode::precondition,
         "cannot map rank {}'s GPU memory with CUDA IPC ({}: {}): the GPUs must be on one node with peer access "
         "(NVLink or PCIe peer-to-peer)",
         peer, cudaGetErrorName(rc), cudaGetErrorString(rc));
  }
  return p;
}

}  // namespace

IpcRegion::IpcRegion(MPI_Comm comm, std::size_t bytes) : bytes_(bytes) {
  int size = 1;
  CCB_MPI(MPI_Comm_rank(comm, &rank_));
  CCB_MPI(MPI_Comm_size(comm, &size));
  void* mine = nullptr;
  CCB_CUDA(cudaMalloc(&mine, bytes));
  CCB_CUDA(cudaMemset(mine, 0, bytes));
  CCB_CUDA(cudaDeviceSynchronize());
  Exported e{};
  CCB_CUDA(cudaIpcGetMemHandle(&e.handle, mine));
  auto all = exchange(comm, e);
  ptrs_.assign(static_cast<std::size_t>(size), nullptr);
  for (int r = 0; r < size; ++r) ptrs_[static_cast<std::size_t>(r)] = r == rank_ ? mine : open_handle(all[static_cast<std::size_t>(r)].handle, r);
  // Nobody may use a peer's region before its owner zeroed it and everyone mapped it.
  check_mpi(MPI_Barrier(comm), "MPI_Barrier after mapping CUDA IPC memory");
}

// Destructors cannot report: teardown errors are left unchecked on purpose (the run's outcome
// is already decided, and a failed unmap at exit frees nothing less).
IpcRegion::~IpcRegion() {
  for (std::size_t r = 0; r < ptrs_.size(); ++r) {
    if (static_cast<int>(r) == rank_) (void)cudaFree(ptrs_[r]);
    else if (ptrs_[r]) (void)cudaIpcCloseMemHandle(ptrs_[r]);
  }
}

IpcBufferMap::IpcBufferMap(MPI_Comm comm, void* buffer) {
  int size = 1;
  CCB_MPI(MPI_Comm_rank(comm, &rank_));
  CCB_MPI(MPI_Comm_size(comm, &size));
  std::uintptr_t base = 0;
  allocation_of(buffer, &base);
  Exported e{};
  e.offset = reinterpret_cast<std::uintptr_t>(buffer) - base;
  CCB_CUDA(cudaIpcGetMemHandle(&e.handle, reinterpret_cast<void*>(base)));
  auto all = exchange(comm, e);
  ptrs_.assign(static_cast<std::size_t>(size), nullptr);
  bases_.assign(static_cast<std::size_t>(size), nullptr);
  for (int r = 0; r < size; ++r) {
    auto i = static_cast<std::size_t>(r);
    if (r == rank_) {
      ptrs_[i] = buffer;
    } else {
      bases_[i] = open_handle(all[i].handle, r);
      ptrs_[i] = static_cast<char*>(bases_[i]) + all[i].offset;
    }
  }
  check_mpi(MPI_Barrier(comm), "MPI_Barrier after mapping CUDA IPC memory");
}

IpcBufferMap::~IpcBufferMap() {
  for (void* b : bases_)
    if (b) (void)cudaIpcCloseMemHandle(b);
}

}  // namespace ccbench
