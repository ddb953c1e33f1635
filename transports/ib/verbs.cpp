#include "transports/ib/verbs.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <infiniband/verbs.h>

#include "core/error.h"

namespace ccbench {

// ib_logic.h mirrors these enums without including verbs.h.
static_assert(static_cast<int>(WcStatus::retry_exc_err) == IBV_WC_RETRY_EXC_ERR);
static_assert(static_cast<int>(WcStatus::rem_access_err) == IBV_WC_REM_ACCESS_ERR);
static_assert(static_cast<int>(WcStatus::general_err) == IBV_WC_GENERAL_ERR);
static_assert(IBV_MTU_256 == 1 && IBV_MTU_4096 == 5);

namespace {

// RC timing as NCCL's defaults (NCCL_IB_TIMEOUT 20, NCCL_IB_RETRY_CNT 7): 4.096 us * 2^20 = 4.3 s
// per try, so a dead peer is reported after about half a minute, not hung on.
constexpr int kAckTimeout = 20;
constexpr int kRetryCount = 7;
constexpr int kRnrRetry = 7;      // 7 = retry without limit while the receiver is not ready
constexpr int kMinRnrTimer = 12;  // 0.64 ms
constexpr int kCqEntries = 4096;
constexpr int kMaxGids = 256;

[[noreturn]] void verbs_fail(const char* call, int err, const std::string& what) {
  fail(ExitCode::runtime, "ib: {} failed while {}: {}", call, what, std::strerror(err ? err : EIO));
}

std::string opcode_name(ibv_wc_opcode op) {
  switch (op) {
    case IBV_WC_SEND: return "SEND_WITH_IMM (credit)";
    case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
    case IBV_WC_RDMA_READ: return "RDMA_READ";
    case IBV_WC_RECV: return "RECV (credit)";
    case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
    default: return fmt::format("opcode {}", static_cast<int>(op));
  }
}

GidType gid_type(std::uint32_t t) {
  if (t == IBV_GID_TYPE_ROCE_V2) return GidType::roce_v2;
  if (t == IBV_GID_TYPE_ROCE_V1) return GidType::roce_v1;
  return GidType::ib;
}

IbPortInfo read_port(ibv_context* ctx, const char* dev, int port) {
  IbPortInfo p;
  p.device = dev;
  p.port = port;
  ibv_port_attr pa{};
  if (int rc = ibv_query_port(ctx, static_cast<std::uint8_t>(port), &pa); rc != 0)
    verbs_fail("ibv_query_port", rc, fmt::format("reading port {}:{}", dev, port));
  p.active = pa.state == IBV_PORT_ACTIVE;
  p.state = ibv_port_state_str(pa.state);
  p.link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? LinkLayer::ethernet : LinkLayer::infiniband;
  p.active_mtu = pa.active_mtu;
  p.lid = pa.lid;
  for (int i = 0; i < pa.gid_tbl_len && i < kMaxGids; ++i) {
    ibv_gid_entry e{};
    if (ibv_query_gid_ex(ctx, static_cast<std::uint32_t>(port), static_cast<std::uint32_t>(i), &e, 0) != 0) continue;
    IbGid g;
    g.index = i;
    g.type = gid_type(e.gid_type);
    std::memcpy(g.raw.data(), e.gid.raw, 16);
    p.gids.push_back(g);
  }
  return p;
}

// The device list, freed on scope exit.
struct DeviceList {
  DeviceList() {
    list = ibv_get_device_list(&n);
    if (!list || n == 0) {
      const int err = errno;
      if (list) ibv_free_device_list(list);
      list = nullptr;
      fail(ExitCode::precondition, "ib: {}{}", missing_rdma_reason().value_or("no RDMA device"),
           err ? fmt::format(" (ibv_get_device_list: {})", std::strerror(err)) : "");
    }
  }
  ~DeviceList() { ibv_free_device_list(list); }
  ibv_device** list = nullptr;
  int n = 0;
};

std::vector<IbPortInfo> ports_of(ibv_device* d) {
  std::vector<IbPortInfo> out;
  ibv_context* ctx = ibv_open_device(d);
  if (!ctx) return out;  // a device we may not open is not a candidate
  ibv_device_attr attr{};
  if (ibv_query_device(ctx, &attr) == 0)
    for (int p = 1; p <= attr.phys_port_cnt; ++p) out.push_back(read_port(ctx, ibv_get_device_name(d), p));
  ibv_close_device(ctx);
  return out;
}

class IbRegistration final : public IbMemory {
 public:
  explicit IbRegistration(ibv_mr* mr) : mr_(mr) {}
  ~IbRegistration() override { ibv_dereg_mr(mr_); }
  std::uint32_t lkey() const override { return mr_->lkey; }
  std::uint32_t rkey() const override { return mr_->rkey; }
  std::uint64_t addr() const override { return reinterpret_cast<std::uint64_t>(mr_->addr); }

 private:
  ibv_mr* mr_;
};

class QueuePair final : public IbQueuePair {
 public:
  QueuePair(ibv_qp* qp, const IbPortChoice& port, const IbOptions& o, std::string peer, std::uint32_t psn)
      : qp_(qp), port_(port), opt_(o), peer_(std::move(peer)), psn_(psn) {}
  ~QueuePair() override { ibv_destroy_qp(qp_); }
  QpState state() const override { return state_; }
  std::uint32_t qpn() const override { return qp_->qp_num; }
  std::uint32_t psn() const override { return psn_; }
  void set_remote(const IbConnData& r, int remote_qp) override {
    remote_ = r;
    remote_qp_ = remote_qp;
  }
  int modify(QpState to) override {
    ibv_qp_attr a{};
    int mask = IBV_QP_STATE;
    if (to == QpState::init) {
      a.qp_state = IBV_QPS_INIT;
      a.pkey_index = 0;
      a.port_num = static_cast<std::uint8_t>(port_.port.port);
      a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
      mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    } else if (to == QpState::rtr) {
      if (remote_qp_ < 0) return EINVAL;  // set_remote() first
      a.qp_state = IBV_QPS_RTR;
      const int mtu = std::min(opt_.mtu ? mtu_enum_from_bytes(opt_.mtu) : port_.port.active_mtu, remote_.mtu);
      a.path_mtu = static_cast<ibv_mtu>(mtu);
      a.dest_qp_num = remote_.qpn[static_cast<std::size_t>(remote_qp_)];
      a.rq_psn = remote_.psn[static_cast<std::size_t>(remote_qp_)];
      a.max_dest_rd_atomic = 1;
      a.min_rnr_timer = kMinRnrTimer;
      a.ah_attr.port_num = static_cast<std::uint8_t>(port_.port.port);
      a.ah_attr.sl = static_cast<std::uint8_t>(opt_.service_level);
      a.ah_attr.dlid = remote_.lid;
      // RoCE always routes by GID; InfiniBand only when the peer has no LID (another subnet).
      if (port_.port.link_layer == LinkLayer::ethernet || remote_.lid == 0) {
        a.ah_attr.is_global = 1;
        std::memcpy(a.ah_attr.grh.dgid.raw, remote_.gid.data(), 16);
        a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(port_.gid_index);
        a.ah_attr.grh.hop_limit = 255;
        a.ah_attr.grh.traffic_class = static_cast<std::uint8_t>(opt_.traffic_class);
      }
      mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
              IBV_QP_MIN_RNR_TIMER;
    } else if (to == QpState::rts) {
      a.qp_state = IBV_QPS_RTS;
      a.timeout = kAckTimeout;
      a.retry_cnt = kRetryCount;
      a.rnr_retry = kRnrRetry;
      a.sq_psn = psn_;
      a.max_rd_atomic = 1;
      mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
    } else {
      return EINVAL;
    }
    const int rc = ibv_modify_qp(qp_, &a, mask);
    if (rc == 0) state_ = to;
    return rc;
  }
  void post_write(const IbMemory& local, std::uint64_t off, std::uint64_t bytes, std::uint64_t raddr,
                  std::uint32_t rkey, bool with_imm, std::uint32_t imm, bool signalled, std::uint64_t wr_id) override {
    ibv_sge sge{local.addr() + off, static_cast<std::uint32_t>(bytes), local.lkey()};
    ibv_send_wr wr{}, *bad = nullptr;
    wr.wr_id = wr_id;
    wr.sg_list = bytes ? &sge : nullptr;
    wr.num_sge = bytes ? 1 : 0;
    wr.opcode = with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
    wr.imm_data = htobe32(imm);
    wr.send_flags = signalled ? IBV_SEND_SIGNALED : 0;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    if (int rc = ibv_post_send(qp_, &wr, &bad); rc != 0)
      verbs_fail("ibv_post_send (RDMA_WRITE)", rc,
                 fmt::format("writing {} bytes to {} on QP {:#x}", bytes, peer_, qpn()));
  }
  void post_send_imm(std::uint32_t imm, std::uint64_t wr_id) override {
    ibv_send_wr wr{}, *bad = nullptr;
    wr.wr_id = wr_id;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.imm_data = htobe32(imm);
    wr.send_flags = IBV_SEND_SIGNALED;
    if (int rc = ibv_post_send(qp_, &wr, &bad); rc != 0)
      verbs_fail("ibv_post_send (SEND_WITH_IMM)", rc, fmt::format("returning credits to {} on QP {:#x}", peer_, qpn()));
  }
  void post_recv(std::uint64_t wr_id) override {
    ibv_recv_wr wr{}, *bad = nullptr;
    wr.wr_id = wr_id;
    if (int rc = ibv_post_recv(qp_, &wr, &bad); rc != 0)
      verbs_fail("ibv_post_recv", rc, fmt::format("posting a receive for {} on QP {:#x}", peer_, qpn()));
  }

 private:
  ibv_qp* qp_;
  const IbPortChoice& port_;
  const IbOptions& opt_;
  std::string peer_;
  std::uint32_t psn_;
  QpState state_ = QpState::reset;
  IbConnData remote_;
  int remote_qp_ = -1;
};

class Device final : public IbDevice {
 public:
  Device(const IbOptions& o, IbPortChoice choice) : opt_(o), port_(std::move(choice)) {
    DeviceList devs;
    for (int i = 0; i < devs.n && !ctx_; ++i)
      if (port_.port.device == ibv_get_device_name(devs.list[i])) ctx_ = ibv_open_device(devs.list[i]);
    if (!ctx_) verbs_fail("ibv_open_device", errno, fmt::format("opening {}", port_.port.device));
    pd_ = ibv_alloc_pd(ctx_);
    if (!pd_) {
      const int err = errno;
      ibv_close_device(ctx_);
      verbs_fail("ibv_alloc_pd", err, fmt::format("allocating a protection domain on {}", port_.port.device));
    }
    cq_ = ibv_create_cq(ctx_, kCqEntries, nullptr, nullptr, 0);
    if (!cq_) {
      const int err = errno;
      ibv_dealloc_pd(pd_);
      ibv_close_device(ctx_);
      verbs_fail("ibv_create_cq", err, fmt::format("creating a completion queue on {}", port_.port.device));
    }
  }
  // Reverse order of set-up; QPs and MRs made from this device are gone by now (their owners
  // are destroyed first).
  ~Device() override {
    ibv_destroy_cq(cq_);
    ibv_dealloc_pd(pd_);
    ibv_close_device(ctx_);
  }
  const IbPortChoice& port() const override { return port_; }
  const IbOptions& options() const override { return opt_; }
  std::unique_ptr<IbMemory> register_host(void* p, std::size_t bytes, bool remote_write) override {
    ibv_mr* mr = ibv_reg_mr(pd_, p, bytes, access(remote_write));
    if (!mr)
      verbs_fail("ibv_reg_mr", errno, fmt::format("registering {} bytes of host memory (check ulimit -l)", bytes));
    return std::make_unique<IbRegistration>(mr);
  }
  std::unique_ptr<IbMemory> register_dmabuf(int fd, std::uint64_t offset, std::size_t bytes, std::uint64_t iova,
                                            bool remote_write) override {
    ibv_mr* mr = ibv_reg_dmabuf_mr(pd_, offset, bytes, iova, fd, access(remote_write));
    if (!mr)
      verbs_fail("ibv_reg_dmabuf_mr", errno,
                 fmt::format("registering {} bytes of GPU memory for GPUDirect RDMA "
                             "(needs a dma-buf capable driver; --gpudirect off stages through host memory)",
                             bytes));
    return std::make_unique<IbRegistration>(mr);
  }
  std::unique_ptr<IbQueuePair> create_qp(int max_send, int max_recv, const std::string& peer) override {
    ibv_qp_init_attr a{};
    a.send_cq = cq_;
    a.recv_cq = cq_;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = static_cast<std::uint32_t>(max_send);
    a.cap.max_recv_wr = static_cast<std::uint32_t>(max_recv);
    a.cap.max_send_sge = 1;
    a.cap.max_recv_sge = 1;
    ibv_qp* qp = ibv_create_qp(pd_, &a);
    if (!qp)
      verbs_fail("ibv_create_qp", errno,
                 fmt::format("creating an RC QP ({} send, {} receive WRs) to {}", max_send, max_recv, peer));
    // A random 24-bit starting PSN, as rc_pingpong's lrand48() & 0xffffff: a stale packet from an
    // earlier connection is then unlikely to be accepted.
    const std::uint32_t psn = static_cast<std::uint32_t>(lrand48()) & 0xffffff;
    return std::make_unique<QueuePair>(qp, port_, opt_, peer, psn);
  }
  int poll(std::vector<IbCompletion>& out, int max) override {
    ibv_wc wc[16];
    const int n = ibv_poll_cq(cq_, std::min(max, 16), wc);
    if (n < 0) verbs_fail("ibv_poll_cq", -n, "polling the completion queue");
    for (int i = 0; i < n; ++i) {
      IbCompletion c;
      c.wr_id = wc[i].wr_id;
      c.status = static_cast<WcStatus>(wc[i].status);
      c.status_text = ibv_wc_status_str(wc[i].status);
      c.opcode = opcode_name(wc[i].opcode);
      c.is_recv = (wc[i].opcode & IBV_WC_RECV) != 0;
      c.has_imm = (wc[i].wc_flags & IBV_WC_WITH_IMM) != 0;
      c.imm = be32toh(wc[i].imm_data);
      c.qpn = wc[i].qp_num;
      c.vendor_err = wc[i].vendor_err;
      out.push_back(std::move(c));
    }
    return n;
  }
  IbConnData local_conn_data() const override {
    IbConnData d;
    d.lid = port_.port.lid;
    d.mtu = opt_.mtu ? mtu_enum_from_bytes(opt_.mtu) : port_.port.active_mtu;
    d.link_layer = port_.port.link_layer;
    for (const IbGid& g : port_.port.gids)
      if (g.index == port_.gid_index) d.gid = g.raw;
    return d;
  }

 private:
  static int access(bool remote_write) { return IBV_ACCESS_LOCAL_WRITE | (remote_write ? IBV_ACCESS_REMOTE_WRITE : 0); }
  IbOptions opt_;
  IbPortChoice port_;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
};

}  // namespace

std::vector<IbPortInfo> ib_list_ports() {
  DeviceList devs;
  std::vector<IbPortInfo> all;
  for (int i = 0; i < devs.n; ++i)
    for (IbPortInfo& p : ports_of(devs.list[i])) all.push_back(std::move(p));
  return all;
}

std::unique_ptr<IbDevice> IbDevice::open(const IbOptions& options) {
  validate_ib_options(options);
  IbPortChoice choice = choose_port(ib_list_ports(), options);
  return std::make_unique<Device>(options, std::move(choice));
}

}  // namespace ccbench
