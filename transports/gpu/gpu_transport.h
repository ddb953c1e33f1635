#pragma once
// GPU transports as an ops table, as NCCL's (transport.h): a can-connect probe (gpu_paths.h),
// set-up of this rank's exported memory, connect with an opaque fixed-size blob exchanged over
// MPI in both directions, disconnect, tear-down in the region's destructor. Teardown is ordered
// across the ranks: every rank disconnects its peers, a barrier, then the regions go (freeing
// CUDA memory a peer still maps is undefined; GpuFifoMesh's destructor). p2p and host have no proxy: the
// SMs move the data (see gpu_conn.h for the FIFO contract both carry), except the halves of host
// connections given to the copy engines (gpu_host_ce.h, set up by GpuFifoMesh).
//
// A region is one rank's memory of one transport, holding its incoming FIFOs and its outgoing
// heads, addressed by the GPU of every rank connected to it through that transport.
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

namespace ccbench {

constexpr std::size_t kConnectBlobBytes = 256;  // NCCL's CONNECT_SIZE
struct ConnectBlob {
  char data[kConnectBlobBytes];
};

class GpuRegion {
 public:
  GpuRegion(int rank, int nranks) : rank_(rank), ptrs_(static_cast<std::size_t>(nranks), nullptr), hosts_(ptrs_) {}
  virtual ~GpuRegion() = default;
  GpuRegion(const GpuRegion&) = delete;
  GpuRegion& operator=(const GpuRegion&) = delete;
  // Device pointers (this GPU's view): our own region, and rank r's once connected (else null).
  char* local() const { return ptrs_[static_cast<std::size_t>(rank_)]; }
  char* of(int r) const { return ptrs_[static_cast<std::size_t>(r)]; }
  // The same regions at this process's host addresses, for a CPU proxy (host only; else null).
  char* host_of(int r) const { return hosts_[static_cast<std::size_t>(r)]; }
  int nranks() const { return static_cast<int>(ptrs_.size()); }
  // Whether no peer can map this region: true until its blob goes out (setup), and again once
  // every rank has disconnected and passed a barrier (its owner says so). A region whose peers
  // map memory it owns frees it in its destructor only then; else the process's end frees it.
  bool unmapped() const { return unmapped_; }
  void set_unmapped(bool u = true) { unmapped_ = u; }

 protected:
  void set(int r, char* p) { ptrs_[static_cast<std::size_t>(r)] = p; }
  void set_host(int r, char* p) { hosts_[static_cast<std::size_t>(r)] = p; }
  int rank_;

 private:
  std::vector<char*> ptrs_;
  std::vector<char*> hosts_;
  bool unmapped_ = true;
};

struct GpuTransport {
  std::string_view name;
  // Allocates this rank's zeroed region of `bytes` and describes it in `blob` (rank side).
  std::unique_ptr<GpuRegion> (*setup)(int rank, int nranks, std::size_t bytes, ConnectBlob* blob);
  // Maps rank `peer`'s region, described by its blob, into `mine`. Throws Error(precondition)
  // with the reason when the peer's memory cannot be mapped.
  void (*connect)(GpuRegion& mine, int peer, const ConnectBlob& theirs);
  // After every rank has connected (a barrier): drops what only connecting needed (names).
  void (*connected)(GpuRegion& mine);
  // Unmaps every peer region connected into `mine` (local; never throws). The regions are
  // destroyed only after every rank has disconnected and passed a barrier.
  void (*disconnect)(GpuRegion& mine);
};

const GpuTransport& gpu_p2p_transport();
const GpuTransport& gpu_host_transport();
// By name ("p2p", "host"); throws Error(usage) for another.
const GpuTransport& gpu_transport(std::string_view name);

}  // namespace ccbench
