#include "transports/ib/ib_transport.h"

#include <map>

#include <fmt/format.h>

#include "core/build_config.h"
#include "core/checks.h"
#include "core/error.h"
#include "transports/cpu/mpi_channel.h"
#include "core/transport_names.h"
#include "transports/net/credit_channel.h"
#if CCBENCH_HAVE_IBVERBS
#include "transports/ib/gpu_memory.h"
#include "transports/ib/verbs.h"
#endif

namespace ccbench {

namespace {

IbOptions& ib_options_storage() {
  static IbOptions o;
  return o;
}

}  // namespace

void set_ib_options(const IbOptions& options) {
  validate_ib_options(options);
  ib_options_storage() = options;
}

const IbOptions& ib_options() { return ib_options_storage(); }

std::optional<std::string> agreed_ib_unavailable_reason(MPI_Comm comm, const RankLayout& layout) {
  const std::optional<std::string> mine = ib_unavailable_reason();
  int me = mine ? layout.rank : layout.nranks, first = layout.nranks;
  check_mpi(MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce of the ib availability");
  if (first == layout.nranks) return std::nullopt;
  if (mine) return mine;
  return fmt::format("rank {} (host {}) cannot use RDMA", first, layout.host_of[static_cast<size_t>(first)]);
}

#if !CCBENCH_HAVE_IBVERBS

std::optional<std::string> ib_unavailable_reason() {
  return std::string(
      "this ccbench was built without ibverbs (install libibverbs-dev and configure with "
      "-DCCBENCH_WITH_IBVERBS=ON)");
}

TransportOps ib_transport_ops() { return left_out_transport<ib_unavailable_reason>(name(Transport::ib)); }

#else

std::optional<std::string> ib_unavailable_reason() {
  if (auto missing = missing_rdma_reason()) return missing;
  try {
    choose_port(ib_list_ports(), ib_options());
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

namespace {

// MPI tags of the connection-data exchange: above every channel tag (connect.cpp's 2^20).
constexpr int kSenderDataTag = 1 << 21;
constexpr int kIbReceiverDataTag = (1 << 21) + (1 << 20);

class IbChannelEnd;

// The device and completion queue every ib channel of one connect_channels() call shares;
// completions go to the channel that owns their QP.
class IbJob final : public TransportJob {
 public:
  explicit IbJob(const IbOptions& o) : device_(IbDevice::open(o)) {}
  IbDevice& device() { return *device_; }
  void enlist(std::uint32_t qpn, IbChannelEnd* end) { owners_[qpn] = end; }
  void forget(std::uint32_t qpn) { owners_.erase(qpn); }
  // Polls the CQ once and hands every completion to its channel (which throws on an error).
  void progress();

 private:
  std::unique_ptr<IbDevice> device_;
  std::map<std::uint32_t, IbChannelEnd*> owners_;
  std::vector<IbCompletion> batch_;
};

// What both ends have beyond their slots: registered memory, QPs, the peer's data.
class IbChannelEnd : public CreditEnd {
 public:
  IbChannelEnd(const SetupArgs& a, bool remote_write)
      : CreditEnd(Transport::ib, a, false), job_(static_cast<IbJob&>(*a.job)) {
    check_mpi(MPI_Comm_rank(a.comm, &rank_), "MPI_Comm_rank");
    char* base = reinterpret_cast<char*>(region_.base);
    mr_ = gpu_ >= 0 ? register_gpu_memory(job_.device(), base, region_.bytes(), gpu_)
                    : job_.device().register_host(base, region_.bytes(), remote_write);
    mr_skew_ = region_.base - mr_->addr();  // a dma-buf MR starts at the page below the slots
    const IbOptions& o = job_.device().options();
    const int chunks = static_cast<int>(max_chunks(slot_bytes_, o.chunk_bytes));
    for (int q = 0; q < o.qps_per_peer; ++q) {
      qps_.push_back(job_.device().create_qp(depth_ * chunks + depth_ + 1, depth_ + 1, peer_));
      job_.enlist(qps_.back()->qpn(), this);
    }
  }
  virtual ~IbChannelEnd() {
    for (auto& qp : qps_) job_.forget(qp->qpn());
  }
  virtual void on_completion(const IbCompletion& c) = 0;
  void progress() { job_.progress(); }

 protected:
  IbConnData local_data() const {
    IbConnData d = job_.device().local_conn_data();
    d.rank = rank_;
    for (const auto& qp : qps_) {
      d.qpn.push_back(qp->qpn());
      d.psn.push_back(qp->psn());
    }
    d.rkey = mr_->rkey();
    d.addr = region_.base;  // host and dma-buf MRs both name memory by its virtual address
    d.bytes = region_.bytes();
    d.slots = static_cast<std::uint32_t>(depth_);
    return d;
  }
  void connect_to(const IbConnData& remote) {
    if (remote.qpn.size() != qps_.size())
      fail(ExitCode::precondition,
           "ib: {} uses {} QPs per peer, this rank {} (--ib-qps must be the same on every rank)", peer_,
           remote.qpn.size(), qps_.size());
    remote_ = remote;
    for (size_t q = 0; q < qps_.size(); ++q) {
      qps_[q]->set_remote(remote, static_cast<int>(q));
      bring_up(*qps_[q], fmt::format("{:#x} (tag {}, {} of {})", qps_[q]->qpn(), tag_, q + 1, qps_.size()), peer_);
    }
  }
  void check(const IbCompletion& c) const {
    if (c.status != WcStatus::success)
      throw Error(
          classify_completion(c.status).code,
          completion_error_message(c.status, c.status_text, name(wr_kind(c.wr_id)), peer_, c.qpn, c.vendor_err));
  }
  // The exchange of connection data: each end posts its receive before the phase in which the
  // peer sends (the receiver in create_recv, the sender before it sends), so that no wait depends
  // on MPI sending small messages eagerly.
  void send_data(MPI_Comm comm, int tag) {
    blob_ = encode_conn(local_data());
    check_mpi(MPI_Isend(blob_.data(), static_cast<int>(blob_.size()), MPI_BYTE, peer_rank_, tag, comm, &send_req_),
              "MPI_Isend of ib connection data");
  }
  void post_receive(MPI_Comm comm, int tag) {
    check_mpi(
        MPI_Irecv(peer_blob_.data(), static_cast<int>(peer_blob_.size()), MPI_BYTE, peer_rank_, tag, comm, &recv_req_),
        "MPI_Irecv of ib connection data");
  }
  IbConnData receive_data(const SetupArgs& a) {
    MPI_Status st{};
    wait(recv_req_, &st, a, "its ib connection data");
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    return decode_conn(peer_blob_.data(), static_cast<size_t>(count), peer_rank_);
  }
  void finish_send(const SetupArgs& a) {
    wait(send_req_, MPI_STATUS_IGNORE, a, "to take this rank's ib connection data");
  }

  IbJob& job_;
  int rank_ = 0;
  std::unique_ptr<IbMemory> mr_;
  std::uint64_t mr_skew_ = 0;  // region_.base - mr_->addr()
  std::vector<std::unique_ptr<IbQueuePair> > qps_;
  IbConnData remote_;

 private:
  void wait(MPI_Request& req, MPI_Status* st, const SetupArgs& a, const char* what) {
    wait_setup_request(req, st, a.deadline, transport_, fmt::format("{} did not send {} in time", peer_, what));
  }
  ConnBlob blob_{}, peer_blob_{};
  MPI_Request send_req_ = MPI_REQUEST_NULL, recv_req_ = MPI_REQUEST_NULL;
};

void IbJob::progress() {
  batch_.clear();
  device_->poll(batch_, 16);
  for (const IbCompletion& c : batch_) {
    auto it = owners_.find(c.qpn);
    if (it == owners_.end())
      fail(ExitCode::runtime, "ib: completion {} on QP {:#x}, which no channel owns: {}", c.opcode, c.qpn,
           c.status_text);
    it->second->on_completion(c);
  }
}

// Slot k travels as RDMA writes on QP k mod qps, the last WITH_IMM (its length); a credit is a
// send with immediate on QP 0.
class IbRecvChannel final : public CreditRecvChannel<IbRecvChannel, IbChannelEnd> {
 public:
  explicit IbRecvChannel(const SetupArgs& a) : CreditRecvChannel(a, true) {
    for (auto& qp : qps_)
      for (int i = 0; i < depth_; ++i) qp->post_recv(wr_id(WrKind::recv));
    next_on_qp_.resize(qps_.size());
    for (size_t q = 0; q < qps_.size(); ++q) next_on_qp_[q] = q;
    post_receive(a.comm, kSenderDataTag + a.tag);  // the sender sends during attach_send
    send_data(a.comm, kIbReceiverDataTag + a.tag);
  }
  void connected(const SetupArgs& a) {
    connect_to(receive_data(a));
    finish_send(a);
  }
  void return_credit(std::uint32_t) { qps_[0]->post_send_imm(credit_imm(1), wr_id(WrKind::credit)); }
  void on_completion(const IbCompletion& c) override {
    check(c);
    if (!c.is_recv) return;  // a credit went out
    size_t q = 0;
    while (q < qps_.size() && qps_[q]->qpn() != c.qpn) ++q;
    const ImmMeaning m = decode_imm(c.imm);
    if (!c.has_imm || m.credit || m.value > slot_bytes_)
      fail(ExitCode::runtime, "ib: {} sent a write with immediate {:#x}, not a slot length up to {}", peer_, c.imm,
           slot_bytes_);
    // Slot k travels on QP k mod qps, in order on that QP.
    const std::uint64_t seq = next_on_qp_[q];
    next_on_qp_[q] += qps_.size();
    arrived(seq, m.value);
    qps_[q]->post_recv(wr_id(WrKind::recv));
  }

 private:
  std::vector<std::uint64_t> next_on_qp_;
};

class IbSendChannel final : public CreditSendChannel<IbSendChannel, IbChannelEnd> {
 public:
  explicit IbSendChannel(const SetupArgs& a) : CreditSendChannel(a) {
    for (int i = 0; i < depth_; ++i) qps_[0]->post_recv(wr_id(WrKind::recv));  // credits arrive on QP 0
    post_receive(a.comm, kIbReceiverDataTag + a.tag);
    const IbConnData remote = receive_data(a);
    if (remote.slots != region_.depth || remote.bytes != region_.bytes())
      fail(ExitCode::precondition, "ib: {} offers {} slots in {} bytes, this rank expects {} in {}", peer_,
           remote.slots, remote.bytes, region_.depth, region_.bytes());
    send_data(a.comm, kSenderDataTag + a.tag);
    connect_to(remote);
    finish_send(a);
  }
  // Zero-copy sends only from the caller's slots (registered).
  bool sends_any_memory() const { return false; }
  // Every write goes to its QP when posted (the notice rides on its last chunk): nothing waits.
  bool flushed() const { return true; }
  // Writes `bytes` at `from` (in the slots) into the peer's slot k, the last chunk WITH_IMM.
  void write_slot(std::uint64_t seq, std::uint32_t k, const char* from, size_t bytes, bool) {
    IbQueuePair& qp = *qps_[static_cast<size_t>(qp_of_slot(seq, static_cast<int>(qps_.size())))];
    const std::uint64_t local = mr_skew_ + (reinterpret_cast<std::uint64_t>(from) - region_.base);
    const std::uint64_t remote = remote_.addr + region_.slot_offset(k);
    for (const Chunk& c : plan_chunks(bytes, job_.device().options().chunk_bytes))
      qp.post_write(*mr_, local + c.offset, c.bytes, remote + c.offset, remote_.rkey, c.last,
                    c.last ? data_imm(bytes) : 0, c.last, wr_id(WrKind::data, seq));
  }
  void on_completion(const IbCompletion& c) override {
    check(c);
    if (!c.is_recv) {  // a slot's last (signalled) write has completed
      written(wr_seq(c.wr_id));
      return;
    }
    const ImmMeaning m = decode_imm(c.imm);
    if (!c.has_imm || !m.credit)
      fail(ExitCode::runtime, "ib: {} sent immediate {:#x} where a credit was due", peer_, c.imm);
    credited(m.value);
    qps_[0]->post_recv(wr_id(WrKind::recv));
  }
};

}  // namespace

TransportOps ib_transport_ops() {
  return credit_transport_ops<IbRecvChannel, IbSendChannel>(
      name(Transport::ib),
      [](const RankLayout&, int, int, std::string* why) {
        static const std::optional<std::string> reason = ib_unavailable_reason();  // probe once
        if (reason && why) *why = *reason;
        return !reason;
      },
      [](const SetupArgs&) -> std::unique_ptr<TransportJob> { return std::make_unique<IbJob>(ib_options()); });
}

#endif

}  // namespace ccbench
