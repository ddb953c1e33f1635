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
#include "transports/net/slot_flow.h"
#include "transports/slot_memory.h"
#include "transports/wait.h"
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

namespace {

// MPI tags of the connection-data exchange: above every channel tag (connect.cpp's 2^20) and
// apart from ib's (2^21 and up).
constexpr int kOfiReceiverDataTag = 1 << 22;
// Bytes of a provider name exchanged when the ranks agree on one.
constexpr std::size_t kNameBytes = 64;
// A credit is the count of slots released so far.
using Credit = std::uint64_t;
static_assert(sizeof(Credit) == kOfiCreditBytes);

// Polls `req` until it completes, or Error(timeout) naming `what` once the set-up deadline passes.
void wait_request(MPI_Request& req, MPI_Status* st, std::chrono::steady_clock::time_point deadline,
                  const std::string& what) {
  Backoff backoff;
  for (int done = 0;;) {
    check_mpi(MPI_Test(&req, &done, st), "MPI_Test during ofi set-up");
    if (done) return;
    if (std::chrono::steady_clock::now() > deadline) fail(ExitCode::timeout, "ofi: channel set-up: {}", what);
    backoff.pause();
  }
}

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
  wait_request(req, MPI_STATUS_IGNORE, a.deadline, fmt::format("every rank to send its {}", what));
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

// Both ends of a channel: slots (their own, or the caller's), registered memory, the credit
// buffers, and the connection data exchanged over MPI.
class OfiChannelEnd {
 public:
  OfiChannelEnd(const SetupArgs& a, bool remote_write)
      : job_(static_cast<OfiJob&>(*a.job)), peer_(peer_label(a)), peer_rank_(a.peer), tag_(a.tag),
        slot_bytes_(a.options->slot_bytes), depth_(a.options->depth), caller_slots_(a.slots != nullptr),
        gpu_(a.slots ? a.slots_gpu : -1) {
    if (!job_.usable()) fail(ExitCode::runtime, "ofi: channel to {} on an endpoint that was not opened", peer_);
    if (depth_ > kOfiMaxSlots)
      fail(ExitCode::usage, "ofi: channels of {} slots; at most {} (CCBENCH_CPU_SLOT_DEPTH)", depth_, kOfiMaxSlots);
    check_mpi(MPI_Comm_rank(a.comm, &rank_), "MPI_Comm_rank");
    char* base = a.slots;
    if (!base) {
      // Receivers' slots take the peer's writes; shm's pin their pages per write (slot_memory.h).
      if (remote_write) own_.allocate_huge(slot_bytes_, depth_);
      else own_.allocate(slot_bytes_, depth_);
      base = own_.slot(0);
    }
    region_ = {reinterpret_cast<std::uint64_t>(base), caller_slots_ ? slot_bytes_ : own_.stride,
               static_cast<std::uint32_t>(depth_)};
    mr_ = job_.ep().register_memory(base, region_.bytes(), remote_write, gpu_, job_.next_key());
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
  OfiChannelEnd(const OfiChannelEnd&) = delete;
  OfiChannelEnd& operator=(const OfiChannelEnd&) = delete;

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

 protected:
  const std::string& provider() const { return job_.provider(); }
  OfiProtocol protocol() const { return job_.plan().protocol; }
  Credit* credit(std::uint64_t i) const {
    return reinterpret_cast<Credit*>(credits_.slot(0)) + i % static_cast<std::uint64_t>(depth_);
  }
  char* slot(std::uint32_t k) const { return reinterpret_cast<char*>(region_.base) + region_.slot_offset(k); }

  OfiJob& job_;
  std::string peer_;
  int peer_rank_, tag_, rank_ = 0;
  std::size_t slot_bytes_;
  int depth_;
  bool caller_slots_;  // zero-copy ends: the slots are the caller's
  int gpu_;            // the CUDA device holding the caller's slots (FI_HMEM), or -1
  SlotMemory own_;     // the slots, unless the caller gave its own
  SlotRegion region_;
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

class OfiRecvChannel final : public RecvChannel, public DirectRecv, public OfiChannelEnd {
 public:
  explicit OfiRecvChannel(const SetupArgs& a)
      : OfiChannelEnd(a, protocol_of(a) == OfiProtocol::rma),
        ring_(name(Transport::ofi), static_cast<std::uint32_t>(depth_)) {
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
    wait_request(send_req_, MPI_STATUS_IGNORE, a.deadline,
                 fmt::format("{} did not take this rank's connection data "
                             "in time",
                             peer_));
  }
  const void* try_peek(std::size_t* bytes) override {
    if (caller_slots_)
      fail(ExitCode::runtime, "ofi: the zero-copy channel from {} is read with try_receive_into", peer_);
    if (!ring_.peek()) job_.progress();
    const auto len = ring_.peek();
    if (!len) return nullptr;
    *bytes = static_cast<std::size_t>(*len);
    return slot(static_cast<std::uint32_t>(ring_.released() % static_cast<std::uint64_t>(depth_)));
  }
  // The freed slot takes the next message (tagged: its receive is posted again) before the credit
  // tells the sender so.
  void release() override {
    const auto freed = static_cast<std::uint32_t>(ring_.released() % static_cast<std::uint64_t>(depth_));
    ring_.release();
    if (protocol() == OfiProtocol::tagged) post_slot_receive(freed);
    send_credit();
  }
  std::size_t slot_bytes() const override { return slot_bytes_; }
  DirectRecv* direct() override { return caller_slots_ ? this : nullptr; }
  // The peer's transfer has already landed in the caller's slot: `dst` must be that slot.
  bool try_receive_into(void* dst, std::size_t cap, std::size_t* bytes) override {
    const std::uint64_t slot_addr =
        region_.base +
        region_.slot_offset(static_cast<std::uint32_t>(ring_.taken() % static_cast<std::uint64_t>(depth_)));
    if (reinterpret_cast<std::uint64_t>(dst) != slot_addr || cap < slot_bytes_)
      fail(ExitCode::runtime,
           "ofi: zero-copy receive from {} into {} ({} bytes), but the peer writes slot {:#x} ({} "
           "bytes)",
           peer_, dst, cap, slot_addr, slot_bytes_);
    auto got = ring_.take();
    if (!got) {
      job_.progress();
      got = ring_.take();
    }
    if (!got) return false;
#if CCBENCH_HAVE_CUDA
    if (gpu_ >= 0) flush_gpudirect_writes(gpu_, "ofi");  // the GPU reads what the NIC wrote only after a flush
#endif
    *bytes = static_cast<std::size_t>(got->bytes);
    return true;
  }
  void on_completion(OfiOp op, std::uint32_t seq, const OfiCompletion& c) override {
    if (op == OfiOp::credit_send) {
      free_credits_.push_back(seq);
      if (credit_owed_) send_credit();
      return;
    }
    if (op != OfiOp::data_recv)
      fail(ExitCode::runtime, "ofi: a receiving channel completed a {}", name(op, protocol()));
    arrived(seq, c.len);
  }
  void on_remote_write(std::uint32_t slot, std::size_t len) override {
    if (protocol() != OfiProtocol::rma)
      fail(ExitCode::runtime, "ofi ({}): {} wrote into a channel carried by tagged messages", provider(), peer_);
    arrived(slot, len);
  }

 private:
  static OfiProtocol protocol_of(const SetupArgs& a) { return static_cast<OfiJob&>(*a.job).plan().protocol; }
  void arrived(std::uint32_t slot, std::size_t len) {
    if (slot >= static_cast<std::uint32_t>(depth_) || len > slot_bytes_)
      fail(ExitCode::runtime, "ofi ({}): {} sent {} bytes into slot {}; the channel has {} slots of {} bytes",
           provider(), peer_, len, slot, depth_, slot_bytes_);
    ring_.on_arrival(ring_.seq_of_slot(slot), len, peer_);
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

  ArrivalRing ring_;
  OfiConnBlob blob_{};
  MPI_Request send_req_ = MPI_REQUEST_NULL;
  std::vector<std::uint32_t> free_credits_;  // credit buffers not in flight
  bool credit_owed_ = false;
  bool credit_queued_ = false;  // an injected credit waits in the job's queue
};

class OfiSendChannel final : public SendChannel, public DirectSend, public OfiChannelEnd {
 public:
  explicit OfiSendChannel(const SetupArgs& a)
      : OfiChannelEnd(a, false), window_(name(Transport::ofi), static_cast<std::uint32_t>(depth_)),
        writes_(name(Transport::ofi), static_cast<std::uint32_t>(depth_)) {
    for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(depth_); ++i) post_credit_receive(i);
    OfiConnBlob blob{};
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st{};
    check_mpi(MPI_Irecv(blob.data(), static_cast<int>(blob.size()), MPI_BYTE, peer_rank_, kOfiReceiverDataTag + tag_,
                        a.comm, &req),
              "MPI_Irecv of ofi connection data");
    wait_request(req, &st, a.deadline, fmt::format("{} did not send its ofi connection data in time", peer_));
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    remote_ = decode_ofi_conn(blob.data(), static_cast<std::size_t>(count), peer_rank_, protocol());
    if (remote_.slots != region_.depth || (protocol() == OfiProtocol::rma && remote_.bytes % remote_.slots != 0))
      fail(ExitCode::precondition, "ofi: {} offers {} slots in {} bytes, this rank expects {} slots of {} bytes", peer_,
           remote_.slots, remote_.bytes, region_.depth, slot_bytes_);
    remote_stride_ = remote_.bytes / remote_.slots;
  }
  void* try_acquire() override {
    if (!can_post()) job_.progress();
    return can_post() ? slot(window_.slot_to_fill()) : nullptr;
  }
  void post(std::size_t bytes) override {
    if (bytes > slot_bytes_)
      fail(ExitCode::runtime, "ofi: post of {} bytes to {} into slots of {}", bytes, peer_, slot_bytes_);
    send_from(slot(window_.slot_to_fill()), mr_.get(), bytes);
  }
  std::size_t slot_bytes() const override { return slot_bytes_; }
  bool try_drain() override {
    if (writes_.outstanding()) job_.progress();
    return writes_.outstanding() == 0;
  }
  // Caller slots: sends from them (registered). Otherwise, where the provider asks no descriptors,
  // sends from any of the caller's memory: the CPU executors send their output straight from it.
  DirectSend* direct() override { return caller_slots_ || job_.plan().send_any_memory ? this : nullptr; }
  // The bytes go as they are: from wherever they lie in the caller's registered slots, or from
  // any memory (never registered) where the plan allows it.
  bool try_post_from(const void* data, std::size_t bytes) override {
    if (bytes > slot_bytes_)
      fail(ExitCode::runtime, "ofi: zero-copy send of {} bytes to {} into slots of {}", bytes, peer_, slot_bytes_);
    if (caller_slots_) (void)region_.offset_of(reinterpret_cast<std::uint64_t>(data), bytes);
    if (!can_post()) job_.progress();
    if (!can_post()) return false;
    send_from(static_cast<const char*>(data), caller_slots_ ? mr_.get() : nullptr, bytes);
    return true;
  }
  std::uint64_t sent() const override { return writes_.done(); }
  void on_completion(OfiOp op, std::uint32_t seq, const OfiCompletion& c) override {
    if (op == OfiOp::data_send) {  // the slot's bytes have left this rank's memory
      const std::uint64_t s = ofi_unwrap_seq(seq, writes_.done());
      if (job_.plan().notify_after_write) notify(s);
      writes_.on_complete(s);
      return;
    }
    if (op != OfiOp::credit_recv || c.len != sizeof(Credit))
      fail(ExitCode::runtime, "ofi ({}): {} sent {} bytes where an {}-byte credit was due", provider(), peer_, c.len,
           sizeof(Credit));
    const Credit released = *credit(seq);
    if (released > window_.credited()) window_.on_credit(static_cast<std::uint32_t>(released - window_.credited()));
    post_credit_receive(seq);
  }

 private:
  // A slot is free once the receiver has credited it back and its own transfer has completed (a
  // credit can arrive before the completion of the transfer it answers).
  bool can_post() const { return window_.can_post() && writes_.outstanding() < region_.depth; }
  void post_credit_receive(std::uint64_t i) {
    const std::uint64_t tag = ofi_tag(OfiMsgKind::credit, peer_rank_, tag_, 0);
    const auto k = static_cast<std::uint32_t>(i % static_cast<std::uint64_t>(depth_));
    job_.post([this, k, tag] {
      return job_.ep().trecv(credit(k), sizeof(Credit), *credit_mr_, tag, ofi_cookie(id_, OfiOp::credit_recv, k));
    });
  }
  // Sends `bytes` at `from` (in region `mem`, or never registered: nullptr) into the peer's next
  // slot. notify_after_write: the write goes bare and its CQ data waits for its completion; shm
  // completes the write inside fi_write, so the progress call sends the notice at once.
  void send_from(const char* from, const OfiMemory* mem, std::size_t bytes) {
    const std::uint64_t seq = window_.posted();
    const std::uint32_t k = window_.slot_to_fill();
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
    window_.on_post();
    writes_.on_post();
    if (notify_later) job_.progress();
  }
  std::uint64_t remote_address(std::uint32_t k) const { return remote_.base + k * remote_stride_; }
  // The CQ data of post `seq`, alone, now that its write has completed.
  void notify(std::uint64_t seq) {
    const auto k = static_cast<std::uint32_t>(seq % static_cast<std::uint64_t>(depth_));
    const std::uint64_t remote = remote_address(k), data = notices_[k];
    job_.post([=, this] { return job_.ep().inject_data(peer_address_, remote, remote_.key, data); });
  }

  CreditWindow window_;
  InOrderCompletions writes_;  // which posts' bytes have left the slots
  OfiConnData remote_;
  std::uint64_t remote_stride_ = 0;
  std::array<std::uint64_t, kOfiMaxSlots> notices_{};  // rma: the CQ data of each slot's last post
};

}  // namespace

TransportOps ofi_transport_ops() {
  return {name(Transport::ofi),
          false,
          [](const RankLayout&, int, int, std::string*) { return true; },
          [](const SetupArgs& a) -> std::unique_ptr<TransportJob> { return std::make_unique<OfiJob>(a); },
          [](const SetupArgs& a, ChannelSetup*) -> std::unique_ptr<RecvChannel> {
            return std::make_unique<OfiRecvChannel>(a);
          },
          [](const SetupArgs& a, const ChannelSetup&) -> std::unique_ptr<SendChannel> {
            return std::make_unique<OfiSendChannel>(a);
          },
          [](const SetupArgs& a, RecvChannel& ch) { static_cast<OfiRecvChannel&>(ch).connected(a); }};
}

#endif

}  // namespace ccbench
