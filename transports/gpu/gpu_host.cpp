// host: a region of pinned shared host memory on the node (NCCL's SHM transport, legacy path).
// The owner creates a /dev/shm file, reserves its pages (fallocate, so a full /dev/shm is an
// error here and never a SIGBUS later), maps and zeroes it; every process maps it and registers
// its own mapping with cudaHostRegister(Portable | Mapped), then asks for the device pointer.
// The owner unlinks the name once every peer has attached (connected()).
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/checks_cuda.h"
#include "core/error.h"
#include "transports/gpu/gpu_transport.h"
#include "core/transport_names.h"

namespace ccbench {

namespace {

struct HostBlob {
  char name[64];
  std::uint64_t bytes;
};
static_assert(sizeof(HostBlob) <= kConnectBlobBytes, "host connection data must fit the blob");

std::size_t page_rounded(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

// One mapping of a /dev/shm file, registered with CUDA; released in reverse order.
class Mapping {
 public:
  Mapping(int fd, std::size_t bytes, const char* name) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
      fail(ExitCode::precondition, "host: mmap of {} ({} bytes) failed: {}", name, bytes, std::strerror(errno));
    host_ = static_cast<char*>(p);
    const cudaError_t rc = cudaHostRegister(host_, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped);
    if (rc != cudaSuccess) {
      cudaGetLastError();
      munmap(host_, bytes_);
      fail(ExitCode::precondition, "host: cudaHostRegister of {} ({} bytes) failed ({}: {}); check `ulimit -l`", name,
           bytes, cudaGetErrorName(rc), cudaGetErrorString(rc));
    }
    void* d = nullptr;
    CCB_CUDA(cudaHostGetDevicePointer(&d, host_, 0));
    device_ = static_cast<char*>(d);
  }
  ~Mapping() {
    cudaHostUnregister(host_);
    munmap(host_, bytes_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  char* host() const { return host_; }
  char* device() const { return device_; }

 private:
  std::size_t bytes_;
  char* host_ = nullptr;
  char* device_ = nullptr;
};

class HostRegion final : public GpuRegion {
 public:
  HostRegion(int rank, int nranks, std::size_t bytes) : GpuRegion(rank, nranks), bytes_(page_rounded(bytes)) {
    static std::atomic<int> serial{0};
    const std::string name = fmt::format("/ccbench-gpu-{}-{}-{}", getpid(), rank, serial++);
    const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) fail(ExitCode::precondition, "host: cannot create /dev/shm{}: {}", name, std::strerror(errno));
    name_ = name;
    const int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes_));
    if (rc != 0) {
      close(fd);
      unlink_name();
      fail(ExitCode::precondition,
           "host: cannot reserve {} bytes in /dev/shm for the GPU FIFOs: {} (is /dev/shm "
           "large enough? Docker's default is 64 MB)",
           bytes_, std::strerror(rc));
    }
    try {
      own_ = std::make_unique<Mapping>(fd, bytes_, name.c_str());
    } catch (...) {
      close(fd);
      unlink_name();
      throw;
    }
    close(fd);
    std::memset(own_->host(), 0, bytes_);
    set(rank, own_->device());
    set_host(rank, own_->host());
  }
  ~HostRegion() override {
    peers_.clear();
    own_.reset();
    unlink_name();
  }
  const std::string& name() const { return name_; }
  std::size_t bytes() const { return bytes_; }
  void open(int peer, const HostBlob& b) {
    const int fd = shm_open(b.name, O_RDWR, 0);
    if (fd < 0)
      fail(ExitCode::precondition,
           "host: cannot open rank {}'s /dev/shm{}: {} (ranks of one node must share "
           "/dev/shm)",
           peer, b.name, std::strerror(errno));
    std::unique_ptr<Mapping> m;
    try {
      m = std::make_unique<Mapping>(fd, static_cast<std::size_t>(b.bytes), b.name);
    } catch (...) {
      close(fd);
      throw;
    }
    close(fd);
    peers_.push_back(std::move(m));
    set(peer, peers_.back()->device());
    set_host(peer, peers_.back()->host());
  }
  void unlink_name() {
    if (!name_.empty()) shm_unlink(name_.c_str());
    name_.clear();
  }
  // The peers' mappings go; our own region stays (a peer's mapping keeps the pages of ours alive
  // anyway: shared memory outlives its creator's unmap).
  void disconnect() {
    peers_.clear();
    for (int r = 0; r < nranks(); ++r)
      if (r != rank_) {
        set(r, nullptr);
        set_host(r, nullptr);
      }
  }

 private:
  std::size_t bytes_;
  std::string name_;
  std::unique_ptr<Mapping> own_;
  std::vector<std::unique_ptr<Mapping>> peers_;
};

std::unique_ptr<GpuRegion> host_setup(int rank, int nranks, std::size_t bytes, ConnectBlob* blob) {
  auto r = std::make_unique<HostRegion>(rank, nranks, bytes);
  HostBlob b{};
  r->name().copy(b.name, sizeof b.name - 1);
  b.bytes = r->bytes();
  std::memcpy(blob->data, &b, sizeof b);
  return r;
}

void host_connect(GpuRegion& mine, int peer, const ConnectBlob& theirs) {
  HostBlob b{};
  std::memcpy(&b, theirs.data, sizeof b);
  b.name[sizeof b.name - 1] = '\0';
  static_cast<HostRegion&>(mine).open(peer, b);
}

void host_connected(GpuRegion& mine) { static_cast<HostRegion&>(mine).unlink_name(); }

void host_disconnect(GpuRegion& mine) { static_cast<HostRegion&>(mine).disconnect(); }

}  // namespace

const GpuTransport& gpu_host_transport() {
  static const GpuTransport t{name(Transport::host), host_setup, host_connect, host_connected, host_disconnect};
  return t;
}

}  // namespace ccbench
