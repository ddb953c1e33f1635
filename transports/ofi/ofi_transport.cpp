#include "transports/ofi/ofi_transport.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "core/build_config.h"
#include "core/checks.h"
#include "core/error.h"
#include "core/transport_names.h"
#include "transports/net/credit_channel.h"
#include "transports/slot_memory.h"
#if CCBENCH_HAVE_LIBFABRIC
#include "transports/ofi/fabric.h"
#endif
#if CCBENCH_HAVE_LIBFABRIC && CCBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include "transports/net/gpu_direct.h"
#endif

namespace ccbench {

namespace {

OfiOptions& ofi_options_storage() {
  static OfiOptions o;
  return o;
}

int g_hmem_device = -1;
std::string g_gpu_provider = "?";  // prepare_ofi_gpu()'s choice

}  // namespace

void set_ofi_options(const OfiOptions& options) {
  validate_ofi_options(options);
  ofi_options_storage() = options;
}

const OfiOptions& ofi_options() { return ofi_options_storage(); }

int ofi_hmem_device() { return g_hmem_device; }

std::string ofi_gpu_label(bool hmem) { return ofi_net_label(g_gpu_provider, hmem); }

void prepare_ofi_gpu(const RankLayout& layout, int cuda_device) {
  g_gpu_provider = select_ofi(layout, 0).info.provider;
  g_hmem_device = ofi_hmem_unavailable_reason(layout, cuda_device) ? -1 : cuda_device;
}

#if !CCBENCH_HAVE_LIBFABRIC

std::optional<std::string> ofi_unavailable_reason() {
  return std::string(
      "this ccbench was built without libfabric (install libfabric-dev and configure with "
      "-DCCBENCH_WITH_LIBFABRIC=ON)");
}

TransportOps ofi_transport_ops() { return left_out_transport<ofi_unavailable_reason>(name(Transport::ofi)); }

OfiSelection select_ofi(const RankLayout&, std::size_t, bool) {
  fail(ExitCode::precondition, "--transport ofi: {}", *ofi_unavailable_reason());
}

std::optional<std::string> ofi_hmem_unavailable_reason(const RankLayout&, int) { return ofi_unavailable_reason(); }

nlohmann::ordered_json ofi_discovery() { return {{"available", false}, {"reason", *ofi_unavailable_reason()}}; }

std::vector<std::string> remove_ofi_shm_regions() { return {}; }

#else

std::optional<std::string> ofi_unavailable_reason() { return std::nullopt; }

namespace {

// What fi_getinfo offers, asked once per process (loading the providers takes a third of a
// second); with and without FI_HMEM.
const OfiCatalog& catalog(bool hmem) {
  static std::mutex m;
  static std::unique_ptr<OfiCatalog> plain, gpu;
  std::lock_guard<std::mutex> lock(m);
  std::unique_ptr<OfiCatalog>& c = hmem ? gpu : plain;
  if (!c) c = OfiCatalog::query(hmem);
  return *c;
}

const std::vector<std::string>& known_providers() {
  static const std::vector<std::string> known = ofi_known_providers();
  return known;
}

OfiReach reach_of(const RankLayout& l) { return {l.hosts <= 1, l.nodes <= 1}; }

}  // namespace

OfiSelection select_ofi(const RankLayout& layout, std::size_t slot_bytes, bool hmem) {
  const OfiCatalog& c = catalog(hmem);
  const std::size_t i = choose_ofi_endpoint(c.entries(), known_providers(), ofi_options(), reach_of(layout));
  OfiSelection s;
  s.entry = i;
  s.info = c.entries()[i];
  s.plan = plan_ofi(s.info, ofi_options().protocol, slot_bytes);
  s.label = ofi_label(s.info.provider, s.plan.protocol);
  return s;
}

namespace {

#if CCBENCH_HAVE_CUDA
// Why registering GPU memory of `cuda_device` with the provider of `s` fails (a libfabric built
// without CUDA support offers FI_HMEM endpoints and refuses the region), or nullopt when a trial
// region of kHmemProbeBytes registers.
std::optional<std::string> hmem_registration_fails(const OfiSelection& s, int cuda_device) {
  constexpr std::size_t kHmemProbeBytes = 1 << 16;
  void* p = nullptr;
  if (cudaSetDevice(cuda_device) != cudaSuccess || cudaMalloc(&p, kHmemProbeBytes) != cudaSuccess)
    return fmt::format(
        "GPU {} memory could not be allocated for a trial registration: GPU buffers are staged "
        "through host memory",
        cuda_device);
  std::optional<std::string> why;
  try {
    auto ep = catalog(true).open(s.entry, s.plan);
    (void)ep->register_memory(p, kHmemProbeBytes, true, cuda_device, 1);
  } catch (const Error& e) {
    why = fmt::format("{} does not register GPU memory here ({}): GPU buffers are staged through host memory",
                      s.info.provider, e.what());
  }
  (void)cudaFree(p);
  return why;
}
#endif

}  // namespace

std::optional<std::string> ofi_hmem_unavailable_reason(const RankLayout& layout, int cuda_device) {
#if !CCBENCH_HAVE_CUDA
  (void)layout;
  (void)cuda_device;
  return std::string("this ccbench was built without CUDA: GPU buffers are staged through host memory");
#else
  if (!ofi_options().hmem) return std::string("--gpudirect off: GPU buffers are staged through host memory");
  if (auto why = gpudirect_unavailable_reason(true, cuda_device)) return why;
  try {
    const std::string host_provider = select_ofi(layout, 0, false).info.provider;
    const OfiSelection s = select_ofi(layout, 0, true);
    if (s.info.provider != host_provider)
      return fmt::format(
          "provider {} carries no GPU memory here (FI_HMEM): GPU buffers are staged through host "
          "memory",
          host_provider);
    return hmem_registration_fails(s, cuda_device);
  } catch (const Error& e) {
    return fmt::format("no FI_HMEM endpoint ({}): GPU buffers are staged through host memory", e.what());
  }
#endif
}

nlohmann::ordered_json ofi_discovery() {
  nlohmann::ordered_json j = {{"available", true}, {"library", ofi_library_version()}};
  try {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const OfiEndpointInfo& e : catalog(false).entries())
      list.push_back({{"provider", e.provider},
                      {"domain", e.domain},
                      {"fabric", e.fabric},
                      {"protocol", (e.caps & ofi_bits::kRma) && e.cq_data_size >= 4 ? "rma" : "tagged"},
                      {"mode", ofi_mode_names(e.mode)},
                      {"mr_mode", ofi_mr_mode_names(e.mr_mode)}});
    j["endpoints"] = list;
    j["providers_known"] = known_providers();
  } catch (const Error& e) {
    j = {{"available", false}, {"reason", e.what()}};
  }
  return j;
}

std::vector<std::string> remove_ofi_shm_regions() {
  std::vector<std::string> said;
  for (const std::string& path : unlink_ofi_shm_regions())
    said.push_back(fmt::format("removed {}, libfabric shm's region of an endpoint this early end leaves open", path));
  return said;
}

namespace {

// MPI tags of the connection-data exchange: above every channel tag (connect.cpp's 2^20) and
// apart from ib's (2^21 and up).
constexpr int kOfiReceiverDataTag = 1 << 22;
// Bytes of a provider name exchanged when the ranks agree on one.
constexpr std::size_t kNameBytes = 64;
// A credit is the count of slots released so far.
using Credit = std::uint64_t;
static_assert(sizeof(Credit) == kOfiCreditBytes);

// Every rank's fixed-size block of `mine` (collective over comm), bounded by the set-up deadline.
template <std::size_t N>
std::vector<std::array<std::uint8_t, N> > gather_blocks(const SetupArgs& a, const std::array<std::uint8_t, N>& mine,
                                                        const char* what) {
  int n = 0;
  CCB_MPI(MPI_Comm_size(a.comm, &n));
  std::vector<std::array<std::uint8_t, N> > all(static_cast<std::size_t>(n));
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(mine.data(), static_cast<int>(N), MPI_BYTE, all.data(), static_cast<int>(N), MPI_BYTE,
                           a.comm, &req),
            "MPI_Iallgather during ofi set-up");
  wait_setup_request(req, MPI_STATUS_IGNORE, a.deadline, name(Transport::ofi).data(),
                     fmt::format("every rank to send its {}", what));
  return all;
}

class OfiChannelEnd;

// One endpoint per connect_channels() call and rank; completions go to the channel whose number
// their cookie (or remote CQ data) names. Memory the channels registered stays until the endpoint
// is closed, so that no late transfer lands in freed memory.
class OfiJob final : public TransportJob {
 public:
  explicit OfiJob(const SetupArgs& a);
  ~OfiJob() override {
    if (ep_) ep_->quiesce();
    retired_.clear();
  }
  std::string label() const override { return label_; }
  bool usable() const { return ep_ != nullptr; }
  OfiEndpoint& ep() { return *ep_; }
  const OfiPlan& plan() const { return sel_.plan; }
  const std::string& provider() const { return sel_.info.provider; }
  std::uint64_t peer_address(int rank) const { return peers_[static_cast<std::size_t>(rank)]; }
  std::uint64_t next_key() { return ++keys_; }
  std::uint32_t enlist(OfiChannelEnd* end) {
    owners_[next_id_] = end;
    return next_id_++;
  }
  void forget(std::uint32_t id) { owners_.erase(id); }
  // Posts now, or once the provider has room again (FI_EAGAIN), in the order asked.
  void post(std::function<bool()> op) {
    if (queued_.empty() && op()) return;
    queued_.push_back(std::move(op));
  }
  bool idle() const { return queued_.empty(); }
  // Retries queued posts, polls the CQ once and hands every completion to its channel.
  void progress();
  struct Retired {
    std::unique_ptr<OfiMemory> mr;  // closed before its memory is freed
    SlotMemory memory;
  };
  void retire(Retired r) { retired_.push_back(std::move(r)); }

 private:
  OfiSelection sel_;
  std::string label_;
  std::unique_ptr<OfiEndpoint> ep_;
  std::vector<std::uint64_t> peers_;
  std::map<std::uint32_t, OfiChannelEnd*> owners_;
  std::uint32_t next_id_ = 0;
  std::uint64_t keys_ = 0;
  std::deque<std::function<bool()> > queued_;
  std::vector<OfiCompletion> batch_;
  std::vector<Retired> retired_;
};

// Chooses and agrees on the provider, opens the endpoint and exchanges addresses. A rank that fails
// still takes part in both exchanges (with an empty block), so no rank waits for it; it throws, and
// the others return an unusable job: connect.cpp's agreement then ends set-up with its error.
OfiJob::OfiJob(const SetupArgs& a) {
  std::optional<Error> failed;
  try {
    sel_ = select_ofi(*a.layout, a.options->slot_bytes, g_hmem_device >= 0);
    if (sel_.info.provider.size() >= kNameBytes)
      fail(ExitCode::runtime, "ofi: provider name '{}' is longer than {} bytes", sel_.info.provider, kNameBytes - 1);
  } catch (const Error& e) {
    failed = e;
  }
  std::array<std::uint8_t, kNameBytes> name{};
  if (!failed) std::memcpy(name.data(), sel_.info.provider.data(), sel_.info.provider.size());
  std::vector<std::string> chosen;
  for (const auto& b : gather_blocks(a, name, "chosen ofi provider"))
    chosen.emplace_back(reinterpret_cast<const char*>(b.data()),
                        strnlen(reinterpret_cast<const char*>(b.data()), kNameBytes));
  if (failed) throw *failed;
  for (const std::string& c : chosen)
    if (c.empty()) return;  // another rank failed and says why
  check_same_ofi_provider(chosen, a.layout->host_of);
  label_ = sel_.label;
  OfiAddrBlock mine{};
  try {
    ep_ = catalog(g_hmem_device >= 0).open(sel_.entry, sel_.plan);
    mine = encode_ofi_address(ep_->address());
  } catch (const Error& e) {
    failed = e;
  }
  const auto blocks = gather_blocks(a, mine, "ofi endpoint address");
  if (failed) throw *failed;
  std::vector<std::vector<std::uint8_t> > addresses;
  for (std::size_t r = 0; r < blocks.size(); ++r) {
    if (std::all_of(blocks[r].begin(), blocks[r].begin() + 4, [](std::uint8_t b) { return b == 0; })) {
      // a zero length: that rank failed and says why
      ep_.reset();
      return;
    }
    addresses.push_back(decode_ofi_address(blocks[r], static_cast<int>(r)));
  }
  peers_ = ep_->insert_peers(addresses);
}

// What both ends have beyond their slots: registered memory, the credit buffers, the peer's
// address.
class OfiChannelEnd : public CreditEnd {
 public:
  // Receivers' slots take the peer's writes; shm's pin their pages per write (slot_memory.h).
  OfiChannelEnd(const SetupArgs& a, bool remote_write)
      : CreditEnd(Transport::ofi, a, remote_write), job_(static_cast<OfiJob&>(*a.job)) {
    if (!job_.usable()) fail(ExitCode::runtime, "ofi: channel to {} on an endpoint that was not opened", peer_);
    if (depth_ > kOfiMaxSlots)
      fail(ExitCode::usage, "ofi: channels of {} slots; at most {} (CCBENCH_CPU_SLOT_DEPTH)", depth_, kOfiMaxSlots);
    check_mpi(MPI_Comm_rank(a.comm, &rank_), "MPI_Comm_rank");
    mr_ = job_.ep().register_memory(reinterpret_cast<char*>(region_.base), region_.bytes(), remote_write, gpu_,
                                    job_.next_key());
    credits_.allocate(sizeof(Credit) * static_cast<std::size_t>(depth_), 1);
    credit_mr_ = job_.ep().register_memory(credits_.slot(0), credits_.stride, false, -1, job_.next_key());
    id_ = job_.enlist(this);
    peer_address_ = job_.peer_address(peer_rank_);
  }
  virtual ~OfiChannelEnd() {
    job_.forget(id_);
    job_.retire({std::move(mr_), std::move(own_)});
    job_.retire({std::move(credit_mr_), std::move(credits_)});
  }

  virtual void on_completion(OfiOp op, std::uint32_t seq, const OfiCompletion& c) = 0;
  virtual void on_remote_write(std::uint32_t slot, std::size_t len) {
    fail(ExitCode::runtime, "ofi ({}): {} wrote slot {} ({} bytes) into a channel that receives nothing", provider(),
         peer_, slot, len);
  }
  // Error(runtime) naming the operation, the peer and what the provider says, for a failed one.
  void check(OfiOp op, const OfiCompletion& c) const {
    if (c.err)
      throw Error(classify_ofi_error(c.err).code, ofi_completion_message(provider(), name(op, job_.plan().protocol),
                                                                         peer_, c.err, c.err_text, c.prov_text));
  }
  void progress() { job_.progress(); }

 protected:
  const std::string& provider() const { return job_.provider(); }
  OfiProtocol protocol() const { return job_.plan().protocol; }
  Credit* credit(std::uint64_t i) const {
    return reinterpret_cast<Credit*>(credits_.slot(0)) + i % static_cast<std::uint64_t>(depth_);
  }

  OfiJob& job_;
  int rank_ = 0;
  std::unique_ptr<OfiMemory> mr_;
  SlotMemory credits_;  // depth credit words: sent (receivers) or received (senders)
  std::unique_ptr<OfiMemory> credit_mr_;
  std::uint32_t id_ = 0;
  std::uint64_t peer_address_ = 0;
};

void OfiJob::progress() {
  while (!queued_.empty() && queued_.front()()) queued_.pop_front();
  batch_.clear();
  ep_->poll(batch_, 16);
  for (const OfiCompletion& c : batch_) {
    if (c.remote_data) {
      if (c.err)
        fail(ExitCode::runtime, "ofi ({}): a remote write into this rank failed: {} (provider: {})", provider(),
             c.err_text, c.prov_text);
      const OfiCqDataFields f = decode_ofi_cq_data(c.data, plan().length_in_data, c.len);
      auto it = owners_.find(f.channel);
      if (it == owners_.end())
        fail(ExitCode::runtime, "ofi ({}): a remote write names channel {}, which this rank does not have", provider(),
             f.channel);
      it->second->on_remote_write(f.slot, f.bytes);
      continue;
    }
    const OfiCookieFields f = decode_ofi_cookie(c.cookie);
    auto it = owners_.find(f.channel);
    if (it == owners_.end()) continue;  // a channel already closed: nothing waits for it
    it->second->check(f.op, c);
    it->second->on_completion(f.op, f.seq, c);
  }
}

class OfiRecvChannel final : public CreditRecvChannel<OfiRecvChannel, OfiChannelEnd> {
 public:
  explicit OfiRecvChannel(const SetupArgs& a) : CreditRecvChannel(a, protocol_of(a) == OfiProtocol::rma) {
    for (std::uint32_t k = 0; k < static_cast<std::uint32_t>(depth_); ++k) {
      free_credits_.push_back(k);
      if (protocol() == OfiProtocol::tagged) post_slot_receive(k);
    }
    OfiConnData d;
    d.protocol = protocol();
    d.rank = rank_;
    d.tag = tag_;
    d.channel = id_;
    d.slots = static_cast<std::uint32_t>(depth_);
    d.key = mr_->key();
    d.base = ofi_remote_address(job_.plan(), region_.base, 0);
    d.bytes = region_.bytes();
    blob_ = encode_ofi_conn(d);
    check_mpi(MPI_Isend(blob_.data(), static_cast<int>(blob_.size()), MPI_BYTE, peer_rank_, kOfiReceiverDataTag + tag_,
                        a.comm, &send_req_),
              "MPI_Isend of ofi connection data");
  }
  // Every sender has attached: this rank's connection data has been taken.
  void connected(const SetupArgs& a) {
    wait_setup_request(send_req_, MPI_STATUS_IGNORE, a.deadline, transport_,
                       fmt::format("{} did not take this rank's connection data in time", peer_));
  }
  // The freed slot takes the next message (tagged: its receive is posted again) before the credit
  // tells the sender so.
  void return_credit(std::uint32_t freed) {
    if (protocol() == OfiProtocol::tagged) post_slot_receive(freed);
    send_credit();
  }
  void on_completion(OfiOp op, std::uint32_t seq, const OfiCompletion& c) override {
    if (op == OfiOp::credit_send) {
      free_credits_.push_back(seq);
      if (credit_owed_) send_credit();
      return;
    }
    if (op != OfiOp::data_recv)
      fail(ExitCode::runtime, "ofi: a receiving channel completed a {}", name(op, protocol()));
    landed(seq, c.len);
  }
  void on_remote_write(std::uint32_t slot, std::size_t len) override {
    if (protocol() != OfiProtocol::rma)
      fail(ExitCode::runtime, "ofi ({}): {} wrote into a channel carried by tagged messages", provider(), peer_);
    landed(slot, len);
  }

 private:
  static OfiProtocol protocol_of(const SetupArgs& a) { return static_cast<OfiJob&>(*a.job).plan().protocol; }
  // The peer's transfer into `slot` has landed (the completions name the slot).
  void landed(std::uint32_t slot, std::size_t len) {
    if (slot >= static_cast<std::uint32_t>(depth_) || len > slot_bytes_)
      fail(ExitCode::runtime, "ofi ({}): {} sent {} bytes into slot {}; the channel has {} slots of {} bytes",
           provider(), peer_, len, slot, depth_, slot_bytes_);
    arrived(ring_.seq_of_slot(slot), len);
  }
  void post_slot_receive(std::uint32_t k) {
    const std::uint64_t tag = ofi_tag(OfiMsgKind::data, peer_rank_, tag_, k);
    job_.post([this, k, tag] {
      return job_.ep().trecv(slot(k), slot_bytes_, *mr_, tag, ofi_cookie(id_, OfiOp::data_recv, k));
    });
  }
  // Sends the count of slots released so far (counts only grow, so later ones include earlier
  // ones). Injected where the provider takes 8 bytes so: one credit waits in the job's queue at
  // most, and carries the newest count when it goes. Otherwise from a credit buffer; with every
  // buffer in flight, the next one to complete sends the newest count.
  void send_credit() {
    const std::uint64_t tag = ofi_tag(OfiMsgKind::credit, rank_, tag_, 0);
    if (job_.plan().inject_credits) {
      if (credit_queued_) return;
      credit_queued_ = true;
      job_.post([this, tag] {
        const Credit released = ring_.released();
        if (!job_.ep().tinject(&released, sizeof released, peer_address_, tag)) return false;
        credit_queued_ = false;
        return true;
      });
      return;
    }
    if (free_credits_.empty()) {
      credit_owed_ = true;
      return;
    }
    credit_owed_ = false;
    const std::uint32_t n = free_credits_.back();
    free_credits_.pop_back();
    *credit(n) = ring_.released();
    job_.post([this, n, tag] {
      return job_.ep().tsend(credit(n), sizeof(Credit), credit_mr_.get(), peer_address_, tag,
                             ofi_cookie(id_, OfiOp::credit_send, n));
    });
  }

  OfiConnBlob blob_{};
  MPI_Request send_req_ = MPI_REQUEST_NULL;
  std::vector<std::uint32_t> free_credits_;  // credit buffers not in flight
  bool credit_owed_ = false;
  bool credit_queued_ = false;  // an injected credit waits in the job's queue
};

class OfiSendChannel final : public CreditSendChannel<OfiSendChannel, OfiChannelEnd> {
 public:
  explicit OfiSendChannel(const SetupArgs& a) : CreditSendChannel(a) {
    for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(depth_); ++i) post_credit_receive(i);
    OfiConnBlob blob{};
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st{};
    check_mpi(MPI_Irecv(blob.data(), static_cast<int>(blob.size()), MPI_BYTE, peer_rank_, kOfiReceiverDataTag + tag_,
                        a.comm, &req),
              "MPI_Irecv of ofi connection data");
    wait_setup_request(req, &st, a.deadline, transport_,
                       fmt::format("{} did not send its ofi connection data in time", peer_));
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    remote_ = decode_ofi_conn(blob.data(), static_cast<std::size_t>(count), peer_rank_, protocol());
    if (remote_.slots != region_.depth || (protocol() == OfiProtocol::rma && remote_.bytes % remote_.slots != 0))
      fail(ExitCode::precondition, "ofi: {} offers {} slots in {} bytes, this rank expects {} slots of {} bytes", peer_,
           remote_.slots, remote_.bytes, region_.depth, slot_bytes_);
    remote_stride_ = remote_.bytes / remote_.slots;
  }
  // Beyond the caller's slots, where the provider asks no descriptors, zero-copy sends from any
  // of the caller's memory: the CPU executors send their output straight from it.
  bool sends_any_memory() const { return job_.plan().send_any_memory; }
  // Every notice due after a write (notify_after_write) has been posted, not left in the job's
  // queue for want of room. Where a write completes only as the receiver takes it (shm without
  // CMA), its notice goes after the sender's last try_post_from(); a sender that left with it
  // still queued would leave the receiver waiting for the last slot for ever.
  bool flushed() const { return notices_due_ == 0; }
  void on_completion(OfiOp op, std::uint32_t seq, const OfiCompletion& c) override {
    if (op == OfiOp::data_send) {  // the slot's bytes have left this rank's memory
      const std::uint64_t s = ofi_unwrap_seq(seq, written_so_far());
      if (job_.plan().notify_after_write) notify(s);
      written(s);
      return;
    }
    if (op != OfiOp::credit_recv || c.len != sizeof(Credit))
      fail(ExitCode::runtime, "ofi ({}): {} sent {} bytes where an {}-byte credit was due", provider(), peer_, c.len,
           sizeof(Credit));
    credited_up_to(*credit(seq));
    post_credit_receive(seq);
  }
  // Sends `bytes` at `from` (in the registered slots, or never registered) into the peer's slot k
  // as post `seq`. notify_after_write: the write goes bare and its CQ data waits for its
  // completion; shm completes the write inside fi_write, so the progress call sends the notice at
  // once.
  void write_slot(std::uint64_t seq, std::uint32_t k, const char* from, std::size_t bytes, bool registered) {
    const OfiMemory* mem = registered ? mr_.get() : nullptr;
    const std::uint64_t cookie = ofi_cookie(id_, OfiOp::data_send, seq);
    const bool notify_later = job_.plan().notify_after_write;
    if (protocol() == OfiProtocol::rma) {
      const std::uint64_t remote = remote_address(k);
      const std::uint64_t data = ofi_cq_data(remote_.channel, k, job_.plan().length_in_data, bytes);
      const std::optional<std::uint64_t> with = notify_later ? std::nullopt : std::optional<std::uint64_t>(data);
      notices_[k] = data;
      job_.post(
          [=, this] { return job_.ep().write(from, bytes, mem, peer_address_, remote, remote_.key, with, cookie); });
    } else {
      const std::uint64_t tag = ofi_tag(OfiMsgKind::data, rank_, tag_, k);
      job_.post([=, this] { return job_.ep().tsend(from, bytes, mem, peer_address_, tag, cookie); });
    }
    if (notify_later) job_.progress();
  }

 private:
  void post_credit_receive(std::uint64_t i) {
    const std::uint64_t tag = ofi_tag(OfiMsgKind::credit, peer_rank_, tag_, 0);
    const auto k = static_cast<std::uint32_t>(i % static_cast<std::uint64_t>(depth_));
    job_.post([this, k, tag] {
      return job_.ep().trecv(credit(k), sizeof(Credit), *credit_mr_, tag, ofi_cookie(id_, OfiOp::credit_recv, k));
    });
  }
  std::uint64_t remote_address(std::uint32_t k) const { return remote_.base + k * remote_stride_; }
  // The CQ data of post `seq`, alone, now that its write has completed.
  void notify(std::uint64_t seq) {
    const std::uint32_t k = slot_of(seq);
    const std::uint64_t remote = remote_address(k), data = notices_[k];
    ++notices_due_;
    job_.post([=, this] {
      if (!job_.ep().inject_data(peer_address_, remote, remote_.key, data)) return false;
      --notices_due_;
      return true;
    });
  }

  OfiConnData remote_;
  std::uint64_t remote_stride_ = 0;
  std::array<std::uint64_t, kOfiMaxSlots> notices_{};  // rma: the CQ data of each slot's last post
  std::uint32_t notices_due_ = 0;                      // notices waiting in the job's queue
};

}  // namespace

TransportOps ofi_transport_ops() {
  return credit_transport_ops<OfiRecvChannel, OfiSendChannel>(
      name(Transport::ofi), [](const RankLayout&, int, int, std::string*) { return true; },
      [](const SetupArgs& a) -> std::unique_ptr<TransportJob> { return std::make_unique<OfiJob>(a); });
}

#endif

}  // namespace ccbench
