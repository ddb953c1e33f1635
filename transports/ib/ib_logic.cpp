#include "transports/ib/ib_logic.h"

#include <charconv>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"

namespace ccbench {

// ----------------------------------------------------------------------------------- options

void parse_ib_device(std::string_view text, IbOptions* out) {
  const auto colon = text.find(':');
  std::string_view dev = text.substr(0, colon);
  if (dev.empty())
    fail(ExitCode::usage,
         "--ib-dev: '{}' names no device; expected NAME or NAME:PORT (e.g. mlx5_0:1; "
         "`ccbench topo` lists the devices)",
         text);
  out->device = std::string(dev);
  out->port = 0;
  if (colon == std::string_view::npos) return;
  std::string_view port = text.substr(colon + 1);
  int p = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 255)
    fail(ExitCode::usage, "--ib-dev: port '{}' in '{}' is not valid; expected a port number from 1 to 255", port, text);
  out->port = p;
}

int mtu_enum_from_bytes(int bytes) {
  for (int e = 1, b = 256; e <= 5; ++e, b *= 2)
    if (b == bytes) return e;
  return 0;
}

int mtu_bytes_from_enum(int value) { return value >= 1 && value <= 5 ? 128 << value : 0; }

void validate_ib_options(const IbOptions& o) {
  if (o.port < 0 || o.port > 255) fail(ExitCode::usage, "--ib-dev: port {} is not valid; expected 1 to 255", o.port);
  if (o.gid_index < -1 || o.gid_index > 255)
    fail(ExitCode::usage, "--gid-index: {} is not valid; expected a GID table index from 0 to 255 (or leave it out)",
         o.gid_index);
  if (o.qps_per_peer < 1 || o.qps_per_peer > kMaxQpsPerPeer)
    fail(ExitCode::usage, "--ib-qps: {} is not valid; expected 1 to {} queue pairs per peer", o.qps_per_peer,
         kMaxQpsPerPeer);
  if (o.chunk_bytes < kMinChunkBytes || o.chunk_bytes > kMaxChunkBytes || o.chunk_bytes % 64 != 0)
    fail(ExitCode::usage, "--ib-chunk: {} bytes is not valid; expected a multiple of 64 from {} (4K) to {} (1G)",
         o.chunk_bytes, kMinChunkBytes, kMaxChunkBytes);
  if (o.mtu != 0 && mtu_enum_from_bytes(o.mtu) == 0)
    fail(ExitCode::usage,
         "--ib-mtu: {} is not valid; expected 256, 512, 1024, 2048 or 4096 (or leave it out: "
         "the ports' active MTU)",
         o.mtu);
  if (o.traffic_class < 0 || o.traffic_class > 255)
    fail(ExitCode::usage, "--ib-tc: {} is not valid; expected a traffic class from 0 to 255", o.traffic_class);
  if (o.service_level < 0 || o.service_level > 15)
    fail(ExitCode::usage, "--ib-sl: {} is not valid; expected a service level from 0 to 15", o.service_level);
}

// ------------------------------------------------------------------------------ ports, GIDs

bool IbGid::ipv4_mapped() const {
  static constexpr std::uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(raw.data(), prefix, sizeof prefix) == 0;
}

bool IbGid::zero() const {
  for (std::uint8_t b : raw)
    if (b) return false;
  return true;
}

namespace {

std::string describe_ports(const std::vector<IbPortInfo>& ports) {
  std::string s;
  for (const IbPortInfo& p : ports)
    s += fmt::format("{}{}:{} ({}, {})", s.empty() ? "" : ", ", p.device, p.port, p.state,
                     p.link_layer == LinkLayer::ethernet ? "Ethernet/RoCE" : "InfiniBand");
  return s.empty() ? "none" : s;
}

// RoCE: a RoCE v2 GID, IPv4-mapped first (routable over IPv4 as NCCL's default
// NCCL_IB_ADDR_FAMILY), then any RoCE v2, then any non-zero. InfiniBand: index 0.
int default_gid(const IbPortInfo& p) {
  if (p.link_layer == LinkLayer::infiniband) return 0;
  for (const IbGid& g : p.gids)
    if (g.type == GidType::roce_v2 && g.ipv4_mapped()) return g.index;
  for (const IbGid& g : p.gids)
    if (g.type == GidType::roce_v2 && !g.zero()) return g.index;
  for (const IbGid& g : p.gids)
    if (!g.zero()) return g.index;
  fail(ExitCode::precondition,
       "ib: port {}:{} (RoCE) has no usable GID (is an IP address configured on its "
       "interface?); pass --gid-index",
       p.device, p.port);
}

}  // namespace

IbPortChoice choose_port(const std::vector<IbPortInfo>& ports, const IbOptions& o) {
  const IbPortInfo* pick = nullptr;
  for (const IbPortInfo& p : ports) {
    if (!o.device.empty() && p.device != o.device) continue;
    if (o.port != 0 && p.port != o.port) continue;
    if (!p.active) continue;
    pick = &p;
    break;
  }
  if (!pick) {
    std::string wanted = o.device.empty() ? "any device" : o.device;
    if (o.port) wanted += fmt::format(" port {}", o.port);
    fail(ExitCode::precondition, "ib: no active RDMA port matches {} (--ib-dev); ports here: {}", wanted,
         describe_ports(ports));
  }
  IbPortChoice c{*pick, 0};
  if (o.gid_index < 0) {
    c.gid_index = default_gid(*pick);
    return c;
  }
  for (const IbGid& g : pick->gids)
    if (g.index == o.gid_index) {
      if (g.zero())
        fail(ExitCode::usage, "--gid-index: entry {} of {}:{} is empty; valid entries: {}", o.gid_index, pick->device,
             pick->port, [&] {
               std::string s;
               for (const IbGid& x : pick->gids)
                 if (!x.zero()) s += (s.empty() ? "" : ", ") + std::to_string(x.index);
               return s.empty() ? std::string("none") : s;
             }());
      c.gid_index = o.gid_index;
      return c;
    }
  fail(ExitCode::usage, "--gid-index: {} is past the GID table of {}:{} ({} entries)", o.gid_index, pick->device,
       pick->port, pick->gids.size());
}

std::optional<std::string> missing_rdma_reason(const std::string& sysfs_dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(sysfs_dir, ec) && !std::filesystem::is_empty(sysfs_dir, ec) && !ec)
    return std::nullopt;
  const bool exists = std::filesystem::exists(sysfs_dir, ec);
  return fmt::format(
      "no RDMA device: {} {}; load the HCA's driver (mlx5_ib, ...) or set up soft-RoCE "
      "(rdma link add rxe0 type rxe netdev IFACE), and check with ibv_devices",
      sysfs_dir, exists ? "is empty" : "does not exist");
}

// ------------------------------------------------------------------------------- the blob

namespace {

class Writer {
 public:
  explicit Writer(ConnBlob& b) : b_(b) {}
  template <typename T>
  void put(T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i)
      b_[at_++] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i));
  }
  void bytes(const std::uint8_t* p, std::size_t n) {
    std::memcpy(b_.data() + at_, p, n);
    at_ += n;
  }

 private:
  ConnBlob& b_;
  std::size_t at_ = 0;
};

class Reader {
 public:
  explicit Reader(const std::uint8_t* p) : p_(p) {}
  template <typename T>
  T get() {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<std::uint64_t>(p_[at_++]) << (8 * i);
    return static_cast<T>(v);
  }
  void bytes(std::uint8_t* out, std::size_t n) {
    std::memcpy(out, p_ + at_, n);
    at_ += n;
  }

 private:
  const std::uint8_t* p_;
  std::size_t at_ = 0;
};

constexpr std::uint32_t k24Bits = 0xffffff;
// magic, version, count, QP table, lid, mtu, link layer, gid, rkey, addr, bytes, slots, rank.
constexpr std::size_t kUsedBytes = 4 + 2 + 2 + kMaxQpsPerPeer * 8 + 2 + 1 + 1 + 16 + 4 + 8 + 8 + 4 + 4;
static_assert(kUsedBytes <= kConnBlobBytes, "connection data must fit its blob");

}  // namespace

ConnBlob encode_conn(const IbConnData& d) {
  if (d.qpn.empty() || d.qpn.size() > static_cast<std::size_t>(kMaxQpsPerPeer) || d.psn.size() != d.qpn.size())
    fail(ExitCode::runtime, "ib: connection data with {} QPs and {} PSNs cannot be encoded (1 to {} of each)",
         d.qpn.size(), d.psn.size(), kMaxQpsPerPeer);
  for (std::size_t i = 0; i < d.qpn.size(); ++i)
    if (d.qpn[i] == 0 || d.qpn[i] > k24Bits || d.psn[i] > k24Bits)
      fail(ExitCode::runtime, "ib: QP {} has number {:#x} / PSN {:#x}: both must fit 24 bits, the number non-zero", i,
           d.qpn[i], d.psn[i]);
  if (mtu_bytes_from_enum(d.mtu) == 0) fail(ExitCode::runtime, "ib: MTU enum {} cannot be encoded (1 to 5)", d.mtu);
  ConnBlob b{};
  Writer w(b);
  w.put<std::uint32_t>(kConnMagic);
  w.put<std::uint16_t>(kConnVersion);
  w.put<std::uint16_t>(static_cast<std::uint16_t>(d.qpn.size()));
  for (int i = 0; i < kMaxQpsPerPeer; ++i) {
    const bool used = i < static_cast<int>(d.qpn.size());
    w.put<std::uint32_t>(used ? d.qpn[i] : 0);
    w.put<std::uint32_t>(used ? d.psn[i] : 0);
  }
  w.put<std::uint16_t>(d.lid);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(d.mtu));
  w.put<std::uint8_t>(d.link_layer == LinkLayer::ethernet ? 1 : 0);
  w.bytes(d.gid.data(), d.gid.size());
  w.put<std::uint32_t>(d.rkey);
  w.put<std::uint64_t>(d.addr);
  w.put<std::uint64_t>(d.bytes);
  w.put<std::uint32_t>(d.slots);
  w.put<std::int32_t>(d.rank);
  return b;
}

IbConnData decode_conn(const std::uint8_t* data, std::size_t size, int peer) {
  if (size != kConnBlobBytes)
    fail(ExitCode::runtime, "ib: connection data from rank {} is {} bytes, expected {} (a different ccbench build?)",
         peer, size, kConnBlobBytes);
  Reader r(data);
  const auto magic = r.get<std::uint32_t>();
  if (magic != kConnMagic)
    fail(ExitCode::runtime,
         "ib: connection data from rank {} does not start with ccbench's magic ({:#x}, expected "
         "{:#x})",
         peer, magic, kConnMagic);
  const auto version = r.get<std::uint16_t>();
  if (version != kConnVersion)
    fail(ExitCode::runtime,
         "ib: connection data from rank {} is version {}, this build speaks version {} (run the "
         "same ccbench build on every rank)",
         peer, version, kConnVersion);
  IbConnData d;
  const auto count = r.get<std::uint16_t>();
  if (count < 1 || count > kMaxQpsPerPeer)
    fail(ExitCode::runtime, "ib: connection data from rank {} lists {} QPs (1 to {} are valid)", peer, count,
         kMaxQpsPerPeer);
  for (int i = 0; i < kMaxQpsPerPeer; ++i) {
    const auto qpn = r.get<std::uint32_t>(), psn = r.get<std::uint32_t>();
    if (i >= count) continue;
    if (qpn == 0 || qpn > k24Bits || psn > k24Bits)
      fail(ExitCode::runtime,
           "ib: connection data from rank {}: QP {} has number {:#x} and PSN {:#x} (24-bit, "
           "number non-zero)",
           peer, i, qpn, psn);
    d.qpn.push_back(qpn);
    d.psn.push_back(psn);
  }
  d.lid = r.get<std::uint16_t>();
  d.mtu = r.get<std::uint8_t>();
  if (mtu_bytes_from_enum(d.mtu) == 0)
    fail(ExitCode::runtime, "ib: connection data from rank {} has MTU enum {} (1 to 5 are valid)", peer, d.mtu);
  const auto ll = r.get<std::uint8_t>();
  if (ll > 1)
    fail(ExitCode::runtime, "ib: connection data from rank {} has link layer {} (0 IB, 1 Ethernet)", peer, ll);
  d.link_layer = ll ? LinkLayer::ethernet : LinkLayer::infiniband;
  r.bytes(d.gid.data(), d.gid.size());
  d.rkey = r.get<std::uint32_t>();
  d.addr = r.get<std::uint64_t>();
  d.bytes = r.get<std::uint64_t>();
  d.slots = r.get<std::uint32_t>();
  d.rank = r.get<std::int32_t>();
  if (d.rank != peer)
    fail(ExitCode::runtime, "ib: connection data received from rank {} describes rank {}", peer, d.rank);
  if (d.slots == 0 || d.bytes == 0 || d.bytes % d.slots != 0)
    fail(ExitCode::runtime, "ib: connection data from rank {} describes {} bytes in {} slots (non-zero, whole slots)",
         peer, d.bytes, d.slots);
  return d;
}

// ------------------------------------------------------------------------------- QP states

std::string_view name(QpState s) {
  switch (s) {
    case QpState::reset: return "RESET";
    case QpState::init: return "INIT";
    case QpState::rtr: return "RTR";
    case QpState::rts: return "RTS";
    case QpState::error: return "ERROR";
  }
  return "?";
}

QpState next_qp_state(QpState from) {
  switch (from) {
    case QpState::reset: return QpState::init;
    case QpState::init: return QpState::rtr;
    case QpState::rtr: return QpState::rts;
    case QpState::rts:
    case QpState::error: break;
  }
  fail(ExitCode::runtime, "ib: a QP in state {} has no next state on the way to RTS", name(from));
}

namespace {

// What usually makes a step fail (rc_pingpong's and NCCL's experience).
std::string_view step_hint(QpState to, int err) {
  switch (to) {
    case QpState::init: return "the port number or access flags are not accepted by the device";
    case QpState::rtr:
      return err == EINVAL ? "a remote QP number, LID/GID, GID index or path MTU the device rejects (check "
                             "--gid-index and that both ports use the same link layer)"
                           : "the path to the peer cannot be set up";
    case QpState::rts: return "timeout/retry attributes rejected, or the QP is not in RTR";
    default: return "";
  }
}

}  // namespace

void bring_up(QpDriver& qp, const std::string& qp_label, const std::string& peer_label) {
  if (qp.state() != QpState::reset)
    fail(ExitCode::runtime, "ib: QP {} to {} is in state {}, not RESET, before set-up", qp_label, peer_label,
         name(qp.state()));
  while (qp.state() != QpState::rts) {
    const QpState from = qp.state(), to = next_qp_state(from);
    const int err = qp.modify(to);
    if (err != 0)
      fail(ExitCode::runtime, "ib: QP {} to {}: step {}->{} (ibv_modify_qp) failed: {}: {}", qp_label, peer_label,
           name(from), name(to), std::strerror(err), step_hint(to, err));
    if (qp.state() != to)
      fail(ExitCode::runtime, "ib: QP {} to {}: step {}->{} reported success but the QP is in {}", qp_label, peer_label,
           name(from), name(to), name(qp.state()));
  }
}

// ------------------------------------------------------------------------- chunks, credits

std::vector<Chunk> plan_chunks(std::uint64_t bytes, std::uint64_t chunk_bytes) {
  if (chunk_bytes == 0) fail(ExitCode::usage, "ib: chunks of 0 bytes cannot carry data");
  std::vector<Chunk> out;
  std::uint64_t off = 0;
  do {
    const std::uint64_t n = std::min(chunk_bytes, bytes - off);
    out.push_back({off, n, false});
    off += n;
  } while (off < bytes);
  out.back().last = true;
  return out;
}

int qp_of_slot(std::uint64_t seq, int qps) {
  if (qps < 1) fail(ExitCode::usage, "ib: {} queue pairs cannot carry data", qps);
  return static_cast<int>(seq % static_cast<std::uint64_t>(qps));
}

std::uint64_t max_chunks(std::uint64_t slot_bytes, std::uint64_t chunk_bytes) {
  if (chunk_bytes == 0) fail(ExitCode::usage, "ib: chunks of 0 bytes cannot carry data");
  return slot_bytes == 0 ? 1 : (slot_bytes + chunk_bytes - 1) / chunk_bytes;
}

std::uint32_t data_imm(std::uint64_t bytes) {
  if (bytes >= kImmCreditFlag) fail(ExitCode::runtime, "ib: a slot of {} bytes does not fit the immediate", bytes);
  return static_cast<std::uint32_t>(bytes);
}

std::uint32_t credit_imm(std::uint32_t credits) { return kImmCreditFlag | (credits & ~kImmCreditFlag); }

ImmMeaning decode_imm(std::uint32_t imm) { return {(imm & kImmCreditFlag) != 0, imm & ~kImmCreditFlag}; }

// --------------------------------------------------------------------- zero-copy ends

constexpr unsigned kWrKindBits = 4;

std::uint64_t wr_id(WrKind kind, std::uint64_t seq) { return (seq << kWrKindBits) | static_cast<std::uint64_t>(kind); }
WrKind wr_kind(std::uint64_t id) { return static_cast<WrKind>(id & ((1u << kWrKindBits) - 1)); }
std::uint64_t wr_seq(std::uint64_t id) { return id >> kWrKindBits; }

std::string_view name(WrKind kind) {
  switch (kind) {
    case WrKind::data: return "RDMA_WRITE (data)";
    case WrKind::credit: return "SEND_WITH_IMM (credit)";
    case WrKind::recv: return "RECV";
  }
  return "work request";
}

// --------------------------------------------------------------------- completion errors

WcClass classify_completion(WcStatus s) {
  switch (s) {
    case WcStatus::success: return {ExitCode::ok, "success"};
    case WcStatus::retry_exc_err:
    case WcStatus::resp_timeout_err: return {ExitCode::runtime, "peer unreachable or link down"};
    case WcStatus::rnr_retry_exc_err:
      return {ExitCode::runtime, "the peer posted no receive in time (receiver not ready)"};
    case WcStatus::rem_access_err:
    case WcStatus::rem_inv_req_err: return {ExitCode::runtime, "rkey/MR mismatch"};
    case WcStatus::loc_prot_err:
    case WcStatus::loc_access_err:
      return {ExitCode::runtime,
              "local memory registration does not cover the buffer (for GPU memory: PCIe ACS or "
              "a missing dma-buf/peermem path)"};
    case WcStatus::loc_len_err:
    case WcStatus::rem_op_err: return {ExitCode::runtime, "message longer than the posted buffer"};
    case WcStatus::wr_flush_err: return {ExitCode::runtime, "flushed: the QP had already failed (see the first error)"};
    case WcStatus::fatal_err:
    case WcStatus::general_err: return {ExitCode::runtime, "device or driver failure"};
    default: return {ExitCode::runtime, "transport protocol error"};
  }
}

std::string completion_error_message(WcStatus status, std::string_view status_text, std::string_view opcode,
                                     std::string_view peer_label, std::uint32_t qpn, std::uint32_t vendor_err) {
  return fmt::format("ib: {} to {} on QP {:#x} failed: {} (status {}, vendor error {:#x}): {}", opcode, peer_label, qpn,
                     status_text, static_cast<int>(status), vendor_err, classify_completion(status).meaning);
}

}  // namespace ccbench
