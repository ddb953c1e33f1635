#pragma once
// The thin libfabric layer: the only code of ccbench that calls libfabric, in set-up order
// (fi_getinfo -> fi_fabric -> fi_domain -> fi_cq_open, fi_av_open -> fi_endpoint, bind, enable;
// clean-up in reverse). Built only with CCBENCH_WITH_LIBFABRIC; the logic around it
// (transports/ofi/ofi_logic.h) is not. No libfabric type appears here: callers see plain data.
//
// Threads: an OfiEndpoint and everything made from it belong to one thread (FI_THREAD_DOMAIN).
// Errors: Error(runtime) for a failed libfabric call, naming the call, fi_strerror and the step;
// failed operations come back as completions with err set (poll), never as exceptions.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transports/ofi/ofi_logic.h"

namespace ccbench {

// "1.17.0": the libfabric library loaded (fi_version()).
std::string ofi_library_version();

// The providers this libfabric has loaded, whatever endpoints they offer (fi_getinfo with
// FI_PROV_ATTR_ONLY), in libfabric's order, without duplicates: "psm2", "ofi_rxm", "shm", "tcp", ...
std::vector<std::string> ofi_known_providers();

// The /dev/shm files of this process's enabled shm endpoints: shm names its region after the
// endpoint ("fi_shm://<pid>:<domain>:<endpoint>" is /dev/shm/<pid>:<domain>:<endpoint>) and removes
// it when the endpoint closes, so a process that ends without closing (an early end: MPI_Abort,
// _exit) leaves it, and a later process given the same id fails fi_enable with FI_EBUSY. Removes
// those names (every mapping of them stays valid) and returns the paths removed. Any thread.
std::vector<std::string> unlink_ofi_shm_regions();

// A registered memory region. Closed when destroyed (before its endpoint).
class OfiMemory {
 public:
  virtual ~OfiMemory() = default;
  virtual void* desc() const = 0;         // fi_mr_desc: what local operations pass (FI_MR_LOCAL)
  virtual std::uint64_t key() const = 0;  // fi_mr_key: what remote writes name
};

// One completion, translated. Remote writes with CQ data have no cookie (cookie 0, remote_data).
struct OfiCompletion {
  std::uint64_t cookie = 0;
  bool remote_data = false;
  std::uint64_t data = 0;  // the remote CQ data
  std::size_t len = 0;     // bytes received (receives, remote writes with CQ data)
  std::uint64_t tag = 0;   // tagged receives
  int err = 0;             // 0, or the failure's positive error number (FI_E* / errno)
  std::string err_text;    // fi_strerror
  std::string prov_text;   // fi_cq_strerror: what the provider adds
};

// An enabled reliable-datagram endpoint with its fabric, domain, address vector and one
// completion queue for sends and receives.
class OfiEndpoint {
 public:
  virtual ~OfiEndpoint() = default;
  virtual const OfiEndpointInfo& info() const = 0;
  // This endpoint's address (fi_getname).
  virtual std::vector<std::uint8_t> address() const = 0;
  // Inserts every peer's address (fi_av_insert); the handles, in the same order.
  virtual std::vector<std::uint64_t> insert_peers(const std::vector<std::vector<std::uint8_t>>& addresses) = 0;
  // Registers [p, p + bytes): for local sends and receives, and remote writes where `remote_write`;
  // GPU memory of CUDA device `cuda_device` where >= 0 (FI_HMEM). `requested_key` is used unless the
  // provider picks keys (FI_MR_PROV_KEY); bound to this endpoint where FI_MR_ENDPOINT demands it.
  virtual std::unique_ptr<OfiMemory> register_memory(void* p, std::size_t bytes, bool remote_write, int cuda_device,
                                                     std::uint64_t requested_key) = 0;
  // The posts: false when the provider has no room now (FI_EAGAIN); the caller progresses (poll)
  // and posts again. Buffers stay untouched until the completion with `cookie`. `mem` is the
  // region holding a local buffer, or nullptr for host memory never registered (only where the
  // plan's send_any_memory allows it).
  // fi_writedata (remote CQ data `data`), or fi_write (none) where `data` is nullopt.
  virtual bool write(const void* buf, std::size_t len, const OfiMemory* mem, std::uint64_t peer,
                     std::uint64_t remote_addr, std::uint64_t key, std::optional<std::uint64_t> data,
                     std::uint64_t cookie) = 0;
  virtual bool tsend(const void* buf, std::size_t len, const OfiMemory* mem, std::uint64_t peer, std::uint64_t tag,
                     std::uint64_t cookie) = 0;
  virtual bool trecv(void* buf, std::size_t len, const OfiMemory& mem, std::uint64_t tag, std::uint64_t cookie) = 0;
  // The injected posts (FI_INJECT): the provider copies what they carry before returning, so the
  // caller's bytes are free at once, and no completion ever comes (failures show on later
  // operations). fi_inject_writedata of no bytes: remote CQ data `data` alone, naming
  // `remote_addr` of a region the peer registered for remote writes.
  virtual bool inject_data(std::uint64_t peer, std::uint64_t remote_addr, std::uint64_t key, std::uint64_t data) = 0;
  // fi_tinject of `len` bytes (at most info().inject_size).
  virtual bool tinject(const void* buf, std::size_t len, std::uint64_t peer, std::uint64_t tag) = 0;
  // Closes the endpoint itself: nothing moves into or out of registered memory afterwards, so the
  // regions can be closed and their memory freed; then this object goes.
  virtual void quiesce() = 0;
  // Up to `max` completions, non-blocking (appended to `out`, failed ones with err set); returns how many.
  virtual int poll(std::vector<OfiCompletion>& out, int max) = 0;
};

// What fi_getinfo offers for reliable-datagram endpoints with tagged messages and ccbench's mode
// and memory-registration bits (ofi_logic.h's kOfiModesHonoured, kOfiMrModesHonoured), with RMA
// where the provider has it; with `hmem`, only endpoints that carry GPU memory (FI_HMEM).
class OfiCatalog {
 public:
  virtual ~OfiCatalog() = default;
  // Never throws for "nothing offered" (an empty catalog); Error(runtime) for another failure.
  static std::unique_ptr<OfiCatalog> query(bool hmem);
  virtual const std::vector<OfiEndpointInfo>& entries() const = 0;
  // Opens entry `i` as `plan` says. Error(runtime) naming the call and the step.
  virtual std::unique_ptr<OfiEndpoint> open(std::size_t i, const OfiPlan& plan) const = 0;
};

}  // namespace ccbench
