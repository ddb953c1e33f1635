#pragma once
// The thin verbs layer: the only code of ccbench that calls ibverbs (rdma-core), written the
// rc_pingpong way (device -> PD -> CQ -> MR -> QP -> INIT -> RTR -> RTS; clean-up in reverse).
// Built only with CCBENCH_WITH_IBVERBS; the logic around it (transports/ib/ib_logic.h) is not.
// No ibverbs type appears here: callers see plain data.
//
// Threads: an IbDevice and everything made from it belong to one thread.
// Errors: Error(precondition) when no device or port fits (the message lists what exists),
// Error(runtime) for a failed verbs call, naming the call, errno and the step.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transports/ib/ib_logic.h"

namespace ccbench {

// Every port of every RDMA device of this host, with its GID table. Throws Error(precondition)
// with missing_rdma_reason() when there is no device.
std::vector<IbPortInfo> ib_list_ports();

// A registered memory region. Deregistered when destroyed (before its device).
class IbMemory {
 public:
  virtual ~IbMemory() = default;
  virtual std::uint32_t lkey() const = 0;
  virtual std::uint32_t rkey() const = 0;
  virtual std::uint64_t addr() const = 0;  // the address remote writes name (iova)
};

// One completion, translated.
struct IbCompletion {
  std::uint64_t wr_id = 0;
  WcStatus status = WcStatus::success;
  std::string status_text;  // ibv_wc_status_str
  std::string opcode;       // "RDMA_WRITE", "RECV_RDMA_WITH_IMM", ...; undefined unless status is success
  bool is_recv = false;     // a receive completion (data write with immediate, or a credit)
  bool has_imm = false;
  std::uint32_t imm = 0;
  std::uint32_t qpn = 0;  // the local QP it belongs to
  std::uint32_t vendor_err = 0;
};

// An RC queue pair, moved RESET -> INIT -> RTR -> RTS by bring_up() once the peer's connection
// data is known (set_remote).
class IbQueuePair : public QpDriver {
 public:
  virtual std::uint32_t qpn() const = 0;
  virtual std::uint32_t psn() const = 0;
  // The peer's data and which of its QPs this one talks to; must precede the RTR step.
  virtual void set_remote(const IbConnData& remote, int remote_qp) = 0;
  // Posts one RDMA WRITE (with_imm: WRITE_WITH_IMM carrying `imm`); signalled ones complete on
  // the CQ with wr_id. Throws Error(runtime) naming the peer when the send queue refuses it.
  virtual void post_write(const IbMemory& local, std::uint64_t local_offset, std::uint64_t bytes,
                          std::uint64_t remote_addr, std::uint32_t rkey, bool with_imm, std::uint32_t imm,
                          bool signalled, std::uint64_t wr_id) = 0;
  // A zero-byte SEND_WITH_IMM (credits), signalled.
  virtual void post_send_imm(std::uint32_t imm, std::uint64_t wr_id) = 0;
  // One receive work request without a buffer (it takes an immediate).
  virtual void post_recv(std::uint64_t wr_id) = 0;
};

// An opened device port with its protection domain and one completion queue.
class IbDevice {
 public:
  virtual ~IbDevice() = default;
  // Opens the port and GID `options` choose (choose_port). Throws as the header says.
  static std::unique_ptr<IbDevice> open(const IbOptions& options);
  virtual const IbPortChoice& port() const = 0;
  virtual const IbOptions& options() const = 0;
  // Host memory; remote_write lets peers RDMA-write into it.
  virtual std::unique_ptr<IbMemory> register_host(void* p, std::size_t bytes, bool remote_write) = 0;
  // GPU memory exported as a dma-buf (cuMemGetHandleForAddressRange): ibv_reg_dmabuf_mr.
  virtual std::unique_ptr<IbMemory> register_dmabuf(int fd, std::uint64_t offset, std::size_t bytes, std::uint64_t iova,
                                                    bool remote_write) = 0;
  // An RC QP on this device's CQ; `peer_label` ("rank 1 (host b)") names the peer in errors.
  virtual std::unique_ptr<IbQueuePair> create_qp(int max_send, int max_recv, const std::string& peer_label) = 0;
  // Up to `max` completions, non-blocking (appended to `out`); returns how many.
  virtual int poll(std::vector<IbCompletion>& out, int max) = 0;
  // This device's half of a connection's data (lid, gid, mtu, link layer); the caller adds QPs
  // and memory.
  virtual IbConnData local_conn_data() const = 0;
};

}  // namespace ccbench
