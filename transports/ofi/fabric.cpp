#include "transports/ofi/fabric.h"

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>

#include <sys/mman.h>

#include <fmt/format.h>
#include <unistd.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "core/error.h"

namespace ccbench {

// ofi_logic.h mirrors these bits without including libfabric's headers.
static_assert(ofi_bits::kMsg == FI_MSG && ofi_bits::kRma == FI_RMA && ofi_bits::kTagged == FI_TAGGED);
static_assert(ofi_bits::kRead == FI_READ && ofi_bits::kWrite == FI_WRITE && ofi_bits::kRecv == FI_RECV);
static_assert(ofi_bits::kSend == FI_SEND && ofi_bits::kRemoteWrite == FI_REMOTE_WRITE && ofi_bits::kHmem == FI_HMEM);
static_assert(ofi_bits::kLocalComm == FI_LOCAL_COMM && ofi_bits::kRemoteComm == FI_REMOTE_COMM);
static_assert(ofi_bits::kContext == FI_CONTEXT && ofi_bits::kMsgPrefix == FI_MSG_PREFIX);
static_assert(ofi_bits::kAsyncIov == FI_ASYNC_IOV && ofi_bits::kRxCqData == FI_RX_CQ_DATA);
static_assert(ofi_bits::kLocalMr == FI_LOCAL_MR && ofi_bits::kContext2 == FI_CONTEXT2);
static_assert(ofi_bits::kBufferedRecv == FI_BUFFERED_RECV);
static_assert(ofi_bits::kMrBasic == FI_MR_BASIC && ofi_bits::kMrScalable == FI_MR_SCALABLE);
static_assert(ofi_bits::kMrLocal == FI_MR_LOCAL && ofi_bits::kMrRaw == FI_MR_RAW);
static_assert(ofi_bits::kMrVirtAddr == FI_MR_VIRT_ADDR && ofi_bits::kMrAllocated == FI_MR_ALLOCATED);
static_assert(ofi_bits::kMrProvKey == FI_MR_PROV_KEY && ofi_bits::kMrMmuNotify == FI_MR_MMU_NOTIFY);
static_assert(ofi_bits::kMrRmaEvent == FI_MR_RMA_EVENT && ofi_bits::kMrEndpoint == FI_MR_ENDPOINT);
static_assert(ofi_bits::kMrHmem == FI_MR_HMEM);
static_assert(kOfiErrTruncated == FI_ETRUNC);

namespace {

// The API version ccbench speaks: 1.10 brought FI_HMEM and FI_MR_HMEM, the newest bits it uses.
constexpr std::uint32_t kApiVersion = FI_VERSION(1, 10);
constexpr int kPollBatch = 16;

[[noreturn]] void ofi_fail(const char* call, long rc, const std::string& what) {
  fail(ExitCode::runtime, "ofi: {} failed while {}: {}", call, what, fi_strerror(static_cast<int>(-rc)));
}

void close_fid(fid* f) {
  if (f) (void)fi_close(f);  // a destructor cannot report a failed close
}

// fi_getinfo's list, freed on scope exit.
struct InfoList {
  fi_info* head = nullptr;
  InfoList() = default;
  InfoList(const InfoList&) = delete;
  InfoList& operator=(const InfoList&) = delete;
  ~InfoList() {
    if (head) fi_freeinfo(head);
  }
};

// One query of fi_getinfo with ccbench's hints; nothing offered is an empty list.
void get_info(std::uint64_t caps, InfoList* out) {
  fi_info* hints = fi_allocinfo();
  if (!hints) fail(ExitCode::runtime, "ofi: fi_allocinfo failed: out of memory");
  hints->caps = caps;
  hints->ep_attr->type = FI_EP_RDM;
  hints->mode = kOfiModesHonoured;
  hints->domain_attr->mr_mode = static_cast<int>(kOfiMrModesHonoured);
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  const int rc = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints, &out->head);
  fi_freeinfo(hints);
  if (rc == -FI_ENODATA) out->head = nullptr;
  else if (rc != 0) ofi_fail("fi_getinfo", rc, "listing the reliable-datagram endpoints libfabric offers");
}

OfiEndpointInfo translate(const fi_info* i) {
  OfiEndpointInfo e;
  e.provider = i->fabric_attr && i->fabric_attr->prov_name ? i->fabric_attr->prov_name : "?";
  e.domain = i->domain_attr && i->domain_attr->name ? i->domain_attr->name : "?";
  e.fabric = i->fabric_attr && i->fabric_attr->name ? i->fabric_attr->name : "?";
  e.caps = i->caps;
  e.mode = i->mode;
  e.mr_mode = static_cast<std::uint64_t>(static_cast<unsigned>(i->domain_attr->mr_mode));
  e.cq_data_size = i->domain_attr->cq_data_size;
  e.mr_key_size = i->domain_attr->mr_key_size;
  e.max_msg_size = i->ep_attr->max_msg_size;
  e.tx_size = i->tx_attr ? i->tx_attr->size : 0;
  e.inject_size = i->tx_attr ? i->tx_attr->inject_size : 0;
  e.rx_size = i->rx_attr ? i->rx_attr->size : 0;
  return e;
}

// Every operation's context: the provider's scratch space first (FI_CONTEXT, FI_CONTEXT2), then
// the cookie the caller gave. Kept in a pool owned by the endpoint.
struct Op {
  fi_context2 ctx;
  std::uint64_t cookie = 0;
};

// The region names of this process's enabled shm endpoints (unlink_ofi_shm_regions()).
class ShmRegions {
 public:
  static ShmRegions& get() {
    static ShmRegions regions;
    return regions;
  }
  void add(const std::string& name) {
    std::lock_guard lock(mu_);
    names_.insert(name);
  }
  void remove(const std::string& name) {
    std::lock_guard lock(mu_);
    names_.erase(name);
  }
  std::vector<std::string> unlink_all() {
    std::lock_guard lock(mu_);
    std::vector<std::string> removed;
    for (const std::string& n : names_)
      if (shm_unlink(n.c_str()) == 0) removed.push_back("/dev/shm/" + n);
    names_.clear();
    return removed;
  }

 private:
  std::mutex mu_;
  std::set<std::string> names_;
};

class OfiRegistration final : public OfiMemory {
 public:
  explicit OfiRegistration(fid_mr* mr) : mr_(mr) {}
  ~OfiRegistration() override { close_fid(&mr_->fid); }
  void* desc() const override { return fi_mr_desc(mr_); }
  std::uint64_t key() const override { return fi_mr_key(mr_); }

 private:
  fid_mr* mr_;
};

class Endpoint final : public OfiEndpoint {
 public:
  Endpoint(const fi_info* info, const OfiPlan& plan) : info_(translate(info)), plan_(plan) {
    if (int rc = fi_fabric(info->fabric_attr, &fabric_, nullptr)) ofi_fail("fi_fabric", rc, step("opening the fabric"));
    if (int rc = fi_domain(fabric_, const_cast<fi_info*>(info), &domain_, nullptr))
      fail_closing("fi_domain", rc, "opening the domain");
    fi_cq_attr cq{};
    cq.format = FI_CQ_FORMAT_TAGGED;
    cq.wait_obj = FI_WAIT_NONE;
    if (int rc = fi_cq_open(domain_, &cq, &cq_, nullptr))
      fail_closing("fi_cq_open", rc, "opening the completion queue");
    fi_av_attr av{};
    av.type = info->domain_attr->av_type;
    if (int rc = fi_av_open(domain_, &av, &av_, nullptr)) fail_closing("fi_av_open", rc, "opening the address vector");
    if (int rc = fi_endpoint(domain_, const_cast<fi_info*>(info), &ep_, nullptr))
      fail_closing("fi_endpoint", rc, "creating the endpoint");
    if (int rc = fi_ep_bind(ep_, &av_->fid, 0)) fail_closing("fi_ep_bind", rc, "binding the address vector");
    if (int rc = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV))
      fail_closing("fi_ep_bind", rc, "binding the completion queue");
    if (int rc = fi_enable(ep_)) fail_closing("fi_enable", rc, enable_step(rc));
    remember_region();
  }
  ~Endpoint() override { close_all(); }
  void quiesce() override { close_endpoint(); }

  const OfiEndpointInfo& info() const override { return info_; }

  std::vector<std::uint8_t> address() const override {
    std::vector<std::uint8_t> a(kOfiAddrBytes);
    size_t len = a.size();
    if (int rc = fi_getname(&ep_->fid, a.data(), &len))
      ofi_fail("fi_getname", rc, step("reading the endpoint's address"));
    a.resize(len);
    return a;
  }

  std::vector<std::uint64_t> insert_peers(const std::vector<std::vector<std::uint8_t>>& addresses) override {
    std::vector<std::uint64_t> out(addresses.size(), FI_ADDR_NOTAVAIL);
    for (std::size_t r = 0; r < addresses.size(); ++r) {
      fi_addr_t a = FI_ADDR_NOTAVAIL;
      const int n = fi_av_insert(av_, addresses[r].data(), 1, &a, 0, nullptr);
      if (n != 1) ofi_fail("fi_av_insert", n < 0 ? n : -FI_EINVAL, step(fmt::format("adding rank {}'s address", r)));
      out[r] = a;
    }
    return out;
  }

  std::unique_ptr<OfiMemory> register_memory(void* p, std::size_t bytes, bool remote_write, int cuda_device,
                                             std::uint64_t requested_key) override {
    iovec iov{p, bytes};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_SEND | FI_RECV;
    if (info_.caps & FI_RMA) attr.access |= FI_WRITE | (remote_write ? FI_REMOTE_WRITE : 0);
    attr.requested_key = plan_.prov_key ? 0 : requested_key;
    if (cuda_device >= 0) {
      attr.iface = FI_HMEM_CUDA;
      attr.device.cuda = cuda_device;
    }
    fid_mr* mr = nullptr;
    if (int rc = fi_mr_regattr(domain_, &attr, 0, &mr))
      ofi_fail("fi_mr_regattr", rc,
               step(fmt::format("registering {} bytes of {} memory{}", bytes, cuda_device >= 0 ? "GPU" : "host",
                                cuda_device >= 0 ? "" : " (check ulimit -l)")));
    auto m = std::make_unique<OfiRegistration>(mr);
    if (plan_.bind_endpoint) {  // FI_MR_ENDPOINT: the region is usable once bound and enabled
      if (int rc = fi_mr_bind(mr, &ep_->fid, 0)) ofi_fail("fi_mr_bind", rc, step("binding a region to the endpoint"));
      if (int rc = fi_mr_enable(mr)) ofi_fail("fi_mr_enable", rc, step("enabling a region"));
    }
    return m;
  }

  bool write(const void* buf, std::size_t len, const OfiMemory* mem, std::uint64_t peer, std::uint64_t remote_addr,
             std::uint64_t key, std::optional<std::uint64_t> data, std::uint64_t cookie) override {
    Op* op = take_op(cookie);
    if (data)
      return posted(fi_writedata(ep_, buf, len, desc(mem), *data, peer, remote_addr, key, &op->ctx), op,
                    "fi_writedata");
    return posted(fi_write(ep_, buf, len, desc(mem), peer, remote_addr, key, &op->ctx), op, "fi_write");
  }

  bool tsend(const void* buf, std::size_t len, const OfiMemory* mem, std::uint64_t peer, std::uint64_t tag,
             std::uint64_t cookie) override {
    Op* op = take_op(cookie);
    return posted(fi_tsend(ep_, buf, len, desc(mem), peer, tag, &op->ctx), op, "fi_tsend");
  }

  bool inject_data(std::uint64_t peer, std::uint64_t remote_addr, std::uint64_t key, std::uint64_t data) override {
    return injected(fi_inject_writedata(ep_, nullptr, 0, data, peer, remote_addr, key), "fi_inject_writedata");
  }

  bool tinject(const void* buf, std::size_t len, std::uint64_t peer, std::uint64_t tag) override {
    return injected(fi_tinject(ep_, buf, len, peer, tag), "fi_tinject");
  }

  bool trecv(void* buf, std::size_t len, const OfiMemory& mem, std::uint64_t tag, std::uint64_t cookie) override {
    Op* op = take_op(cookie);
    return posted(fi_trecv(ep_, buf, len, desc(&mem), FI_ADDR_UNSPEC, tag, 0, &op->ctx), op, "fi_trecv");
  }

  int poll(std::vector<OfiCompletion>& out, int max) override {
    fi_cq_tagged_entry e[kPollBatch];
    const ssize_t n = fi_cq_read(cq_, e, static_cast<size_t>(std::min(max, kPollBatch)));
    if (n == -FI_EAGAIN) return 0;
    if (n == -FI_EAVAIL) return read_error(out);
    if (n < 0) ofi_fail("fi_cq_read", n, step("polling the completion queue"));
    for (ssize_t i = 0; i < n; ++i) {
      OfiCompletion c;
      c.len = e[i].len;
      c.tag = e[i].tag;
      c.data = e[i].data;
      if ((e[i].flags & FI_REMOTE_WRITE) || !e[i].op_context) {
        c.remote_data = true;  // a peer's write with CQ data landed
      } else {
        c.cookie = give_back(e[i].op_context);
      }
      out.push_back(std::move(c));
    }
    return static_cast<int>(n);
  }

 private:
  std::string step(const std::string& what) const {
    return fmt::format("{} ({} on {})", what, info_.provider, info_.domain);
  }

  // shm names its region after the process id ("/dev/shm/<pid>:<domain>:<endpoint>"), and a
  // process killed outright leaves the file behind. fi_enable then says only FI_EBUSY; in a CI
  // run it did so after a test had killed a rank over shm (ids wrap at kernel.pid_max, 32768 on
  // many systems), so the message names the likely file.
  std::string enable_step(int rc) const {
    if (rc != -FI_EBUSY || info_.provider != "shm") return "enabling the endpoint";
    return fmt::format(
        "enabling the endpoint: shm could not create its region /dev/shm/{}:*, most likely a file left by an "
        "earlier process of the same id that was killed; remove it once no job of that process runs",
        getpid());
  }
  [[noreturn]] void fail_closing(const char* call, int rc, const std::string& what) {
    const std::string message = step(what);
    close_all();
    ofi_fail(call, rc, message);
  }

  // shm's region name: its address less the scheme ("fi_shm://4711:0:0" names /dev/shm/4711:0:0).
  void remember_region() {
    constexpr std::string_view kScheme = "fi_shm://";
    if (info_.provider != "shm") return;
    const std::vector<std::uint8_t> a = address();
    std::string name(a.begin(), std::find(a.begin(), a.end(), std::uint8_t{0}));
    if (name.rfind(kScheme, 0) != 0) return;  // another form of address: nothing known to remove
    region_ = name.substr(kScheme.size());
    ShmRegions::get().add(region_);
  }
  void close_endpoint() {  // shm removes the region itself here
    close_fid(ep_ ? &ep_->fid : nullptr);
    ep_ = nullptr;
    if (!region_.empty()) ShmRegions::get().remove(std::exchange(region_, {}));
  }

  void close_all() {
    close_endpoint();
    close_fid(av_ ? &av_->fid : nullptr);
    close_fid(cq_ ? &cq_->fid : nullptr);
    close_fid(domain_ ? &domain_->fid : nullptr);
    close_fid(fabric_ ? &fabric_->fid : nullptr);
    av_ = nullptr;
    cq_ = nullptr;
    domain_ = nullptr;
    fabric_ = nullptr;
  }

  void* desc(const OfiMemory* m) const { return m && (plan_.local_desc || plan_.hmem_iface) ? m->desc() : nullptr; }

  Op* take_op(std::uint64_t cookie) {
    if (free_.empty()) {
      ops_.push_back(std::make_unique<Op>());
      free_.push_back(ops_.back().get());
    }
    Op* op = free_.back();
    free_.pop_back();
    op->cookie = cookie;
    return op;
  }

  std::uint64_t give_back(void* context) {
    Op* op = static_cast<Op*>(context);  // ctx is Op's first member
    free_.push_back(op);
    return op->cookie;
  }

  bool posted(ssize_t rc, Op* op, const char* call) {
    if (rc == 0) return true;
    free_.push_back(op);
    if (rc == -FI_EAGAIN) return false;
    ofi_fail(call, rc, step("posting an operation"));
  }

  bool injected(ssize_t rc, const char* call) {
    if (rc == 0) return true;
    if (rc == -FI_EAGAIN) return false;
    ofi_fail(call, rc, step("injecting an operation"));
  }

  int read_error(std::vector<OfiCompletion>& out) {
    fi_cq_err_entry e{};
    const ssize_t n = fi_cq_readerr(cq_, &e, 0);
    if (n == -FI_EAGAIN) return 0;
    if (n < 0) ofi_fail("fi_cq_readerr", n, step("reading a failed completion"));
    OfiCompletion c;
    c.err = e.err ? e.err : FI_EOTHER;
    c.err_text = fi_strerror(c.err);
    char buf[256] = {};
    if (const char* t = fi_cq_strerror(cq_, e.prov_errno, e.err_data, buf, sizeof buf)) c.prov_text = t;
    c.len = e.len;
    c.tag = e.tag;
    c.data = e.data;
    if ((e.flags & FI_REMOTE_WRITE) || !e.op_context) c.remote_data = true;
    else c.cookie = give_back(e.op_context);
    out.push_back(std::move(c));
    return 1;
  }

  OfiEndpointInfo info_;
  OfiPlan plan_;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_av* av_ = nullptr;
  fid_ep* ep_ = nullptr;
  std::string region_;                    // shm's /dev/shm name while the endpoint is open, or ""
  std::vector<std::unique_ptr<Op>> ops_;  // every context ever handed out; outlives the endpoint
  std::vector<Op*> free_;
};

// The caps of the two queries: RMA writes with tagged messages (credits), and tagged messages alone
// for providers without RMA.
constexpr std::uint64_t kTaggedCaps = FI_TAGGED | FI_SEND | FI_RECV;
constexpr std::uint64_t kRmaCaps = kTaggedCaps | FI_RMA | FI_WRITE | FI_REMOTE_WRITE;

class Catalog final : public OfiCatalog {
 public:
  explicit Catalog(bool hmem) {
    const std::uint64_t extra = hmem ? FI_HMEM : 0;
    get_info(kRmaCaps | extra, &rma_);
    get_info(kTaggedCaps | extra, &tagged_);
    for (fi_info* i = rma_.head; i; i = i->next) add(i);
    for (fi_info* i = tagged_.head; i; i = i->next) {
      const OfiEndpointInfo e = translate(i);
      const bool seen = std::any_of(entries_.begin(), entries_.end(), [&](const OfiEndpointInfo& x) {
        return x.provider == e.provider && x.domain == e.domain && x.fabric == e.fabric;
      });
      if (!seen) add(i);
    }
  }
  const std::vector<OfiEndpointInfo>& entries() const override { return entries_; }
  std::unique_ptr<OfiEndpoint> open(std::size_t i, const OfiPlan& plan) const override {
    if (i >= infos_.size()) fail(ExitCode::runtime, "ofi: endpoint {} of {} offered does not exist", i, infos_.size());
    return std::make_unique<Endpoint>(infos_[i], plan);
  }

 private:
  void add(const fi_info* i) {
    infos_.push_back(i);
    entries_.push_back(translate(i));
  }
  InfoList rma_, tagged_;
  std::vector<const fi_info*> infos_;  // into rma_ and tagged_
  std::vector<OfiEndpointInfo> entries_;
};

}  // namespace

std::vector<std::string> unlink_ofi_shm_regions() { return ShmRegions::get().unlink_all(); }

std::string ofi_library_version() {
  const std::uint32_t v = fi_version();
  return fmt::format("{}.{}", FI_MAJOR(v), FI_MINOR(v));
}

std::vector<std::string> ofi_known_providers() {
  InfoList list;
  const int rc = fi_getinfo(kApiVersion, nullptr, nullptr, FI_PROV_ATTR_ONLY, nullptr, &list.head);
  if (rc != 0 && rc != -FI_ENODATA) ofi_fail("fi_getinfo", rc, "listing the providers libfabric has");
  std::vector<std::string> out;
  for (fi_info* i = list.head; i; i = i->next) {
    if (!i->fabric_attr || !i->fabric_attr->prov_name) continue;
    const std::string p = i->fabric_attr->prov_name;
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

std::unique_ptr<OfiCatalog> OfiCatalog::query(bool hmem) { return std::make_unique<Catalog>(hmem); }

}  // namespace ccbench
