#include "transports/ib/ib_transport.h"

#include <map>

#include <fmt/format.h>

#include "core/build_config.h"
#include "core/checks.h"
#include "core/error.h"
#include "transports/cpu/mpi_channel.h"
#include "core/transport_names.h"
#include "transports/slot_memory.h"
#include "transports/wait.h"
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

// What both ends have: slots (their own, or the caller's for zero-copy ends), registered memory,
// QPs, the peer's data.
class IbChannelEnd {
 public:
  IbChannelEnd(const SetupArgs& a, bool remote_write)
      : job_(static_cast<IbJob&>(*a.job)), peer_(peer_label(a)), peer_rank_(a.peer), tag_(a.tag),
        slot_bytes_(a.options->slot_bytes), depth_(a.options->depth), caller_slots_(a.slots != nullptr),
        gpu_(a.slots ? a.slots_gpu : -1) {
    check_mpi(MPI_Comm_rank(a.comm, &rank_), "MPI_Comm_rank");
    char* base = a.slots;
    if (!base) {
      own_.allocate(slot_bytes_, depth_);
      base = own_.slot(0);
    }
    region_ = {reinterpret_cast<std::uint64_t>(base), caller_slots_ ? slot_bytes_ : own_.stride,
               static_cast<std::uint32_t>(depth_)};
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
  std::string peer_;
  int peer_rank_, tag_, rank_ = 0;
  size_t slot_bytes_;
  int depth_;
  bool caller_slots_;  // zero-copy ends: the slots are the caller's
  int gpu_;            // the CUDA device holding the caller's slots (GPUDirect), or -1
  SlotMemory own_;     // the slots, unless the caller gave its own
  SlotRegion region_;
  std::unique_ptr<IbMemory> mr_;
  std::uint64_t mr_skew_ = 0;  // region_.base - mr_->addr()
  std::vector<std::unique_ptr<IbQueuePair> > qps_;
  IbConnData remote_;

 private:
  void wait(MPI_Request& req, MPI_Status* st, const SetupArgs& a, const char* what) {
    Backoff backoff;
    for (int done = 0;;) {
      check_mpi(MPI_Test(&req, &done, st), "MPI_Test during ib set-up");
      if (done) return;
      if (std::chrono::steady_clock::now() > a.deadline)
        fail(ExitCode::timeout, "ib: channel set-up: {} did not send {} in time", peer_, what);
      backoff.pause();
    }
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

class IbRecvChannel final : public RecvChannel, public DirectRecv, public IbChannelEnd {
 public:
  IbRecvChannel(const SetupArgs& a)
      : IbChannelEnd(a, true), ring_(name(Transport::ib), static_cast<std::uint32_t>(depth_)) {
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
  const void* try_peek(size_t* bytes) override {
    if (caller_slots_)
      fail(ExitCode::runtime, "ib: the zero-copy channel from {} is read with try_receive_into", peer_);
    if (!ring_.peek()) job_.progress();
    const auto len = ring_.peek();
    if (!len) return nullptr;
    *bytes = static_cast<size_t>(*len);
    return own_.slot(static_cast<size_t>(ring_.released() % static_cast<std::uint64_t>(depth_)));
  }
  void release() override {
    ring_.release();
    qps_[0]->post_send_imm(credit_imm(1), wr_id(WrKind::credit));
  }
  size_t slot_bytes() const override { return slot_bytes_; }
  DirectRecv* direct() override { return caller_slots_ ? this : nullptr; }
  // The peer's write has already landed in the caller's slot: `dst` must be that slot.
  bool try_receive_into(void* dst, size_t cap, size_t* bytes) override {
    const std::uint64_t slot_addr =
        region_.base +
        region_.slot_offset(static_cast<std::uint32_t>(ring_.taken() % static_cast<std::uint64_t>(depth_)));
    if (reinterpret_cast<std::uint64_t>(dst) != slot_addr || cap < slot_bytes_)
      fail(ExitCode::runtime,
           "ib: zero-copy receive from {} into {} ({} bytes), but the peer writes slot {:#x} ({} "
           "bytes)",
           peer_, dst, cap, slot_addr, slot_bytes_);
    auto got = ring_.take();
    if (!got) {
      job_.progress();
      got = ring_.take();
    }
    if (!got) return false;
    if (gpu_ >= 0) flush_gpudirect_writes(gpu_, "ib");  // the GPU reads what the NIC wrote only after a flush
    *bytes = static_cast<size_t>(got->bytes);
    return true;
  }
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
    ring_.on_arrival(seq, m.value, peer_);
    qps_[q]->post_recv(wr_id(WrKind::recv));
  }

 private:
  ArrivalRing ring_;
  std::vector<std::uint64_t> next_on_qp_;
};

class IbSendChannel final : public SendChannel, public DirectSend, public IbChannelEnd {
 public:
  IbSendChannel(const SetupArgs& a)
      : IbChannelEnd(a, false), window_(name(Transport::ib), static_cast<std::uint32_t>(depth_)),
        writes_(name(Transport::ib), static_cast<std::uint32_t>(depth_)) {
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
  void* try_acquire() override {
    if (!can_post()) job_.progress();
    return can_post() ? reinterpret_cast<char*>(region_.base) + region_.slot_offset(window_.slot_to_fill()) : nullptr;
  }
  void post(size_t bytes) override { write_slot(region_.slot_offset(window_.slot_to_fill()), bytes); }
  size_t slot_bytes() const override { return slot_bytes_; }
  bool try_drain() override {
    if (writes_.outstanding()) job_.progress();
    return writes_.outstanding() == 0;
  }
  DirectSend* direct() override { return caller_slots_ ? this : nullptr; }
  // The bytes go as they are, from wherever they lie in the caller's registered slots.
  bool try_post_from(const void* data, size_t bytes) override {
    if (bytes > slot_bytes_)
      fail(ExitCode::runtime, "ib: zero-copy send of {} bytes to {} into slots of {}", bytes, peer_, slot_bytes_);
    const std::uint64_t offset = region_.offset_of(reinterpret_cast<std::uint64_t>(data), bytes);
    if (!can_post()) job_.progress();
    if (!can_post()) return false;
    write_slot(offset, bytes);
    return true;
  }
  std::uint64_t sent() const override { return writes_.done(); }
  void on_completion(const IbCompletion& c) override {
    check(c);
    if (!c.is_recv) {  // a slot's last (signalled) write has completed
      writes_.on_complete(wr_seq(c.wr_id));
      return;
    }
    const ImmMeaning m = decode_imm(c.imm);
    if (!c.has_imm || !m.credit)
      fail(ExitCode::runtime, "ib: {} sent immediate {:#x} where a credit was due", peer_, c.imm);
    window_.on_credit(m.value);
    qps_[0]->post_recv(wr_id(WrKind::recv));
  }

 private:
  // A slot is free once the receiver has credited it back and its own write has completed (a
  // credit can be polled before the completion of the write it answers).
  bool can_post() const { return window_.can_post() && writes_.outstanding() < region_.depth; }
  // Writes `bytes` at `local_offset` of the slots into the peer's next slot, the last chunk WITH_IMM.
  void write_slot(std::uint64_t local_offset, size_t bytes) {
    const std::uint64_t seq = window_.posted();
    IbQueuePair& qp = *qps_[static_cast<size_t>(qp_of_slot(seq, static_cast<int>(qps_.size())))];
    const std::uint64_t remote = remote_.addr + region_.slot_offset(window_.slot_to_fill());
    for (const Chunk& c : plan_chunks(bytes, job_.device().options().chunk_bytes))
      qp.post_write(*mr_, mr_skew_ + local_offset + c.offset, c.bytes, remote + c.offset, remote_.rkey, c.last,
                    c.last ? data_imm(bytes) : 0, c.last, wr_id(WrKind::data, seq));
    window_.on_post();
    writes_.on_post();
  }
  CreditWindow window_;
  InOrderCompletions writes_;  // which posts' bytes have left the slots
};

}  // namespace

TransportOps ib_transport_ops() {
  return {name(Transport::ib),
          false,
          [](const RankLayout&, int, int, std::string* why) {
            static const std::optional<std::string> reason = ib_unavailable_reason();  // probe once
            if (reason && why) *why = *reason;
            return !reason;
          },
          [](const SetupArgs&) -> std::unique_ptr<TransportJob> { return std::make_unique<IbJob>(ib_options()); },
          [](const SetupArgs& a, ChannelSetup*) -> std::unique_ptr<RecvChannel> {
            return std::make_unique<IbRecvChannel>(a);
          },
          [](const SetupArgs& a, const ChannelSetup&) -> std::unique_ptr<SendChannel> {
            return std::make_unique<IbSendChannel>(a);
          },
          [](const SetupArgs& a, RecvChannel& ch) { static_cast<IbRecvChannel&>(ch).connected(a); }};
}

#endif

}  // namespace ccbench
