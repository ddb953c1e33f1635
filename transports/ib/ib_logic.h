#pragma once
// The RDMA (ib) transport's logic that needs no device: options, port and GID choice, the
// connection-data blob, the order of queue-pair states, chunking and credits, and what a failed
// completion means. transports/ib/verbs.* is the only code that calls ibverbs; everything here is
// plain data and is unit-tested without hardware (tests/unit/test_ib_logic.cpp). Nothing in this
// header uses an ibverbs type, so it builds and is tested with CCBENCH_WITH_IBVERBS=OFF too.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/exit_code.h"
#include "transports/net/slot_flow.h"

namespace ccbench {

// ---------------------------------------------------------------------------------------------
// Options (command line: --ib-dev, --gid-index, --ib-qps, --ib-chunk, --ib-mtu, --ib-tc, --ib-sl;
// `gpudirect` is set by the GPU transports that register GPU memory). Every value is checked by validate_ib_options();
// a bad one is Error(usage) naming the flag and the valid range.
// ---------------------------------------------------------------------------------------------
struct IbOptions {
  std::string device;                   // empty: the first device with an active port
  int port = 0;                         // 0: the device's first active port
  int gid_index = -1;                   // -1: chosen (RoCE: a RoCE v2 IPv4 GID; IB: 0)
  int qps_per_peer = 1;                 // RC queue pairs per connection, [1, kMaxQpsPerPeer]
  std::uint64_t chunk_bytes = 1 << 20;  // bytes per RDMA WRITE, [kMinChunkBytes, kMaxChunkBytes]
  int mtu = 0;                          // 0: the active MTU of both ports; else 256..4096
  int traffic_class = 0;                // RoCE/GRH traffic class [0, 255]
  int service_level = 0;                // InfiniBand SL [0, 15]
  bool gpudirect = true;                // GPU buffers registered with dma-buf where built with CUDA
};

inline constexpr int kMaxQpsPerPeer = 16;
inline constexpr std::uint64_t kMinChunkBytes = 4096;        // one page: below, WR rate dominates
inline constexpr std::uint64_t kMaxChunkBytes = 1ull << 30;  // the largest message an HCA takes is 2^31

// "mlx5_0" or "mlx5_0:1" into device and port; Error(usage) for an empty name, a port that is not
// a number from 1 to 255, or a stray colon.
void parse_ib_device(std::string_view text, IbOptions* out);
// Throws Error(usage) naming the first invalid field (as its flag) and what is valid.
void validate_ib_options(const IbOptions& o);
// The MTU in bytes as the ibv_mtu enum value (IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5); 0 if invalid.
int mtu_enum_from_bytes(int bytes);
int mtu_bytes_from_enum(int value);

// ---------------------------------------------------------------------------------------------
// Ports and GIDs: what verbs.cpp reads from the device, and the pure choice among it.
// ---------------------------------------------------------------------------------------------
enum class LinkLayer { infiniband, ethernet };
enum class GidType { ib, roce_v1, roce_v2 };

struct IbGid {
  int index = 0;
  GidType type = GidType::ib;
  std::array<std::uint8_t, 16> raw{};
  bool ipv4_mapped() const;  // ::ffff:a.b.c.d, the GID RoCE v2 routes over IPv4
  bool zero() const;
};

struct IbPortInfo {
  std::string device;
  int port = 1;
  bool active = false;
  std::string state;  // "PORT_ACTIVE", "PORT_DOWN", ... for messages
  LinkLayer link_layer = LinkLayer::infiniband;
  int active_mtu = 5;  // ibv_mtu enum
  std::uint16_t lid = 0;
  std::vector<IbGid> gids;
};

struct IbPortChoice {
  IbPortInfo port;
  int gid_index = 0;
};

// The port and GID to use among `ports` (every port of every device), following options.device,
// options.port and options.gid_index. Throws Error(precondition) when nothing fits, listing the
// ports that exist and their states; Error(usage) for a --gid-index past the port's table.
IbPortChoice choose_port(const std::vector<IbPortInfo>& ports, const IbOptions& options);

// Why RDMA cannot be used on this host, or nullopt when /sys/class/infiniband (or `sysfs_dir`)
// lists a device. "no RDMA device: /sys/class/infiniband is empty; ..." with what to check.
std::optional<std::string> missing_rdma_reason(const std::string& sysfs_dir = "/sys/class/infiniband");

// ---------------------------------------------------------------------------------------------
// Connection data: what each end of a connection tells the other, as a fixed-size blob sent over
// MPI. Layout (little-endian, kConnBlobBytes): magic u32, version u16, qp count u16, then per QP
// its number u32 and starting PSN u32 (kMaxQpsPerPeer entries, unused ones 0), lid u16, mtu enum
// u8, link layer u8, gid[16], rkey u32, buffer address u64, buffer bytes u64, slots u32, rank i32.
// ---------------------------------------------------------------------------------------------
inline constexpr std::uint32_t kConnMagic = 0x31626363;  // "ccb1"
inline constexpr std::uint16_t kConnVersion = 1;
inline constexpr std::size_t kConnBlobBytes = 256;

struct IbConnData {
  int rank = -1;
  std::vector<std::uint32_t> qpn;  // 1..kMaxQpsPerPeer entries, 24-bit, non-zero
  std::vector<std::uint32_t> psn;  // as many as qpn, 24-bit
  std::uint16_t lid = 0;
  int mtu = 5;  // ibv_mtu enum, 1..5
  LinkLayer link_layer = LinkLayer::infiniband;
  std::array<std::uint8_t, 16> gid{};
  std::uint32_t rkey = 0;
  std::uint64_t addr = 0;
  std::uint64_t bytes = 0;
  std::uint32_t slots = 0;
  bool operator==(const IbConnData&) const = default;
};
using ConnBlob = std::array<std::uint8_t, kConnBlobBytes>;

// Throws Error(runtime) if `d` cannot be encoded (QP count, 24-bit fields, MTU).
ConnBlob encode_conn(const IbConnData& d);
// Decodes `size` bytes from `peer`; throws Error(runtime) naming the peer and the field for a
// short blob, a wrong magic, another version, or a value out of range.
IbConnData decode_conn(const std::uint8_t* data, std::size_t size, int peer);

// ---------------------------------------------------------------------------------------------
// Queue-pair states. An RC QP goes RESET -> INIT -> RTR -> RTS, one step at a time; each step
// has its own attributes (verbs.cpp). bring_up() drives any QpDriver through the steps in order
// and turns a failed step into Error(runtime) naming the step, the QP and the peer.
// ---------------------------------------------------------------------------------------------
enum class QpState { reset, init, rtr, rts, error };
std::string_view name(QpState s);  // "RESET", "INIT", "RTR", "RTS", "ERROR"

// The state after `from` on the way to RTS; throws Error(runtime) when `from` cannot go further
// (RTS already, ERROR).
QpState next_qp_state(QpState from);

// What moves one QP between states. modify() returns 0 or an errno value.
class QpDriver {
 public:
  virtual ~QpDriver() = default;
  virtual QpState state() const = 0;
  virtual int modify(QpState to) = 0;
};

// Moves `qp` from RESET to RTS. Throws Error(runtime): "ib: QP <qp_label> to rank <peer>: <step>
// (ibv_modify_qp RESET->INIT) failed: <strerror>: <hint>" when a step fails, or when the QP is not
// in RESET to begin with.
void bring_up(QpDriver& qp, const std::string& qp_label, const std::string& peer_label);

// ---------------------------------------------------------------------------------------------
// Chunking and credits. A message is cut into chunks of at most chunk_bytes; each goes as one
// RDMA WRITE into the receiver's next slot, the last of a slot WITH_IMM so the receiver learns the
// slot's length. The receiver returns a credit (a zero-byte WRITE_WITH_IMM) per slot it frees.
// ---------------------------------------------------------------------------------------------
// A whole slot travels on one QP (slot sequence number modulo the QP count), so the WITH_IMM that
// ends it cannot overtake its own chunks (RC orders writes per QP, not across QPs).
struct Chunk {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  bool last = false;  // the slot's last chunk: WRITE_WITH_IMM
};
// The chunks of one slot of `bytes` (0 bytes: one empty chunk, so the receiver still sees it).
// Throws Error(usage) for chunk_bytes 0.
std::vector<Chunk> plan_chunks(std::uint64_t bytes, std::uint64_t chunk_bytes);
// Which of `qps` queue pairs carries slot number `seq` (counted from 0 over the channel's life).
int qp_of_slot(std::uint64_t seq, int qps);
// Chunks per slot at most: the send-queue depth a channel needs per slot in flight.
std::uint64_t max_chunks(std::uint64_t slot_bytes, std::uint64_t chunk_bytes);

// The immediate of a data write carries the slot's length; that of a credit its count.
inline constexpr std::uint32_t kImmCreditFlag = 0x80000000u;
std::uint32_t data_imm(std::uint64_t bytes);  // throws Error(runtime) at >= 2^31 bytes
std::uint32_t credit_imm(std::uint32_t credits);
struct ImmMeaning {
  bool credit = false;
  std::uint32_t value = 0;  // bytes, or credits
};
ImmMeaning decode_imm(std::uint32_t imm);

// ---------------------------------------------------------------------------------------------
// Work requests. The slots, credits and post order around them are transports/net/slot_flow.h's.
// ---------------------------------------------------------------------------------------------
// Work request ids: the kind in the low 4 bits, a data write's post number above them (the
// sender counts completed posts in order, and a failed completion's opcode is undefined, so the
// id names the operation).
enum class WrKind : std::uint32_t { data = 1, credit = 2, recv = 3 };
std::uint64_t wr_id(WrKind kind, std::uint64_t seq = 0);
WrKind wr_kind(std::uint64_t id);
std::uint64_t wr_seq(std::uint64_t id);
std::string_view name(WrKind kind);  // "RDMA_WRITE (data)", "SEND_WITH_IMM (credit)", "RECV"

// ---------------------------------------------------------------------------------------------
// Completion errors. The numbers are those of enum ibv_wc_status (stable ABI; verbs.cpp
// static_asserts them).
// ---------------------------------------------------------------------------------------------
enum class WcStatus : int {
  success = 0,
  loc_len_err = 1,
  loc_qp_op_err = 2,
  loc_eec_op_err = 3,
  loc_prot_err = 4,
  wr_flush_err = 5,
  mw_bind_err = 6,
  bad_resp_err = 7,
  loc_access_err = 8,
  rem_inv_req_err = 9,
  rem_access_err = 10,
  rem_op_err = 11,
  retry_exc_err = 12,
  rnr_retry_exc_err = 13,
  loc_rdd_viol_err = 14,
  rem_inv_rd_req_err = 15,
  rem_abort_err = 16,
  inv_eecn_err = 17,
  inv_eec_state_err = 18,
  fatal_err = 19,
  resp_timeout_err = 20,
  general_err = 21,
};
struct WcClass {
  ExitCode code = ExitCode::runtime;
  std::string_view meaning;  // "peer unreachable or link down", "rkey/MR mismatch", ...
};
WcClass classify_completion(WcStatus status);

// "ib: RDMA_WRITE_WITH_IMM to rank 1 (host b) on QP 0x1a2 failed: transport retry counter exceeded
// (status 12, vendor error 0x81): peer unreachable or link down". `status_text` is
// ibv_wc_status_str's, `opcode` the work request's.
std::string completion_error_message(WcStatus status, std::string_view status_text, std::string_view opcode,
                                     std::string_view peer_label, std::uint32_t qpn, std::uint32_t vendor_err);

}  // namespace ccbench
