#include "transports/ofi/ofi_logic.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "core/transport_names.h"

namespace ccbench {

// ----------------------------------------------------------------------------------- options

std::string_view name(OfiProtocol p) {
  switch (p) {
    case OfiProtocol::automatic: return "auto";
    case OfiProtocol::rma: return "rma";
    case OfiProtocol::tagged: return "tagged";
  }
  return "?";
}

OfiProtocol parse_ofi_protocol(std::string_view text, std::string_view flag) {
  for (OfiProtocol p : kOfiProtocols)
    if (text == name(p)) return p;
  fail(ExitCode::usage, "{}: unknown value '{}' (valid: auto, rma, tagged)", flag, text);
}

void check_ofi_name(std::string_view value, std::string_view flag, std::string_view what) {
  if (value.empty())
    fail(ExitCode::usage,
         "{}: empty {} name; leave the flag out to let ccbench choose (`ccbench topo` lists the "
         "providers and domains of each host)",
         flag, what);
  if (value.find_first_of(" \t\n,") != std::string_view::npos)
    fail(ExitCode::usage,
         "{}: '{}' is not a libfabric {} name (no spaces or commas; `ccbench topo` lists the "
         "providers and domains of each host)",
         flag, value, what);
}

void validate_ofi_options(const OfiOptions& o) {
  if (!o.provider.empty()) check_ofi_name(o.provider, "--ofi-provider", "provider");
  if (!o.domain.empty()) check_ofi_name(o.domain, "--ofi-domain", "domain");
}

bool ofi_provider_is_local(std::string_view provider) { return provider == "shm" || provider.rfind("shm;", 0) == 0; }

bool ofi_provider_matches(std::string_view wanted, std::string_view provider) {
  if (wanted == provider) return true;
  return provider.substr(0, provider.find(';')) == wanted;
}

// ------------------------------------------------------------------------------- bit names

namespace {

struct BitName {
  std::uint64_t bit;
  std::string_view name;
};

std::string bit_names(std::uint64_t bits, std::initializer_list<BitName> names) {
  std::vector<std::string> set;
  for (const BitName& b : names)
    if (bits & b.bit) {
      set.emplace_back(b.name);
      bits &= ~b.bit;
    }
  if (bits) set.push_back(fmt::format("{:#x}", bits));
  return set.empty() ? "none" : fmt::format("{}", fmt::join(set, "|"));
}

}  // namespace

std::string ofi_mode_names(std::uint64_t mode) {
  using namespace ofi_bits;
  return bit_names(mode, {{kContext, "FI_CONTEXT"},
                          {kContext2, "FI_CONTEXT2"},
                          {kMsgPrefix, "FI_MSG_PREFIX"},
                          {kAsyncIov, "FI_ASYNC_IOV"},
                          {kRxCqData, "FI_RX_CQ_DATA"},
                          {kLocalMr, "FI_LOCAL_MR"},
                          {kBufferedRecv, "FI_BUFFERED_RECV"}});
}

std::string ofi_mr_mode_names(std::uint64_t mr_mode) {
  using namespace ofi_bits;
  return bit_names(mr_mode, {{kMrBasic, "FI_MR_BASIC"},
                             {kMrScalable, "FI_MR_SCALABLE"},
                             {kMrLocal, "FI_MR_LOCAL"},
                             {kMrRaw, "FI_MR_RAW"},
                             {kMrVirtAddr, "FI_MR_VIRT_ADDR"},
                             {kMrAllocated, "FI_MR_ALLOCATED"},
                             {kMrProvKey, "FI_MR_PROV_KEY"},
                             {kMrMmuNotify, "FI_MR_MMU_NOTIFY"},
                             {kMrRmaEvent, "FI_MR_RMA_EVENT"},
                             {kMrEndpoint, "FI_MR_ENDPOINT"},
                             {kMrHmem, "FI_MR_HMEM"}});
}

// --------------------------------------------------------------------- provider and domain

std::string describe_ofi_offers(const std::vector<OfiEndpointInfo>& offered) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_provider;
  for (const OfiEndpointInfo& e : offered) {
    auto it =
        std::find_if(by_provider.begin(), by_provider.end(), [&](const auto& p) { return p.first == e.provider; });
    if (it == by_provider.end()) {
      by_provider.push_back({e.provider, {}});
      it = by_provider.end() - 1;
    }
    if (std::find(it->second.begin(), it->second.end(), e.domain) == it->second.end()) it->second.push_back(e.domain);
  }
  std::string s;
  for (const auto& [p, domains] : by_provider)
    s += fmt::format("{}{} ({})", s.empty() ? "" : ", ", p, fmt::join(domains, ", "));
  return s.empty() ? "none" : s;
}

namespace {

// The entries of `offered` whose provider is `provider` (exactly).
std::vector<std::size_t> entries_of(const std::vector<OfiEndpointInfo>& offered, std::string_view provider) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < offered.size(); ++i)
    if (offered[i].provider == provider) out.push_back(i);
  return out;
}

// The provider named by `wanted`: an exact match first, then the first whose core provider it names.
std::optional<std::string> provider_named(const std::vector<OfiEndpointInfo>& offered, const std::string& wanted) {
  for (const OfiEndpointInfo& e : offered)
    if (e.provider == wanted) return e.provider;
  for (const OfiEndpointInfo& e : offered)
    if (ofi_provider_matches(wanted, e.provider)) return e.provider;
  return std::nullopt;
}

std::string chosen_provider(const std::vector<OfiEndpointInfo>& offered, const std::vector<std::string>& known,
                            const OfiOptions& o, const OfiReach& reach) {
  if (o.provider.empty()) {
    for (std::string_view p : kOfiProviderOrder) {
      if (ofi_provider_is_local(p) && !reach.one_node) continue;
      if (!entries_of(offered, p).empty()) return std::string(p);
    }
    fail(ExitCode::precondition,
         "ofi: none of the providers ccbench takes by default ({}{}) offers a reliable-datagram "
         "endpoint here; offered: {} (name one with --ofi-provider)",
         fmt::join(kOfiProviderOrder, ", "), reach.one_node ? "" : "; shm only within a node",
         describe_ofi_offers(offered));
  }
  std::optional<std::string> p = provider_named(offered, o.provider);
  if (!p) {
    bool exists = false;
    for (const std::string& k : known) exists = exists || ofi_provider_matches(o.provider, k) || k == o.provider;
    if (!exists)
      fail(ExitCode::usage,
           "--ofi-provider: '{}' is not a provider of this libfabric (it has: {}); providers with "
           "reliable-datagram endpoints here: {}",
           o.provider, known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", ")),
           describe_ofi_offers(offered));
    fail(ExitCode::precondition,
         "ofi: provider {} offers no reliable-datagram endpoint with the capabilities ccbench "
         "needs here (no device, or no driver); offered: {}",
         o.provider, describe_ofi_offers(offered));
  }
  if (ofi_provider_is_local(*p) && !reach.one_node)
    fail(ExitCode::precondition,
         "ofi: provider {} moves data within one node and these ranks span nodes{} (use a "
         "network provider: {})",
         *p, reach.one_host ? " (emulated)" : "", describe_ofi_offers(offered));
  return *p;
}

}  // namespace

std::size_t choose_ofi_endpoint(const std::vector<OfiEndpointInfo>& offered, const std::vector<std::string>& known,
                                const OfiOptions& o, const OfiReach& reach) {
  validate_ofi_options(o);
  const std::string provider = chosen_provider(offered, known, o, reach);
  const std::vector<std::size_t> mine = entries_of(offered, provider);
  std::vector<std::string> domains;
  for (std::size_t i : mine)
    if (std::find(domains.begin(), domains.end(), offered[i].domain) == domains.end())
      domains.push_back(offered[i].domain);
  std::string domain = o.domain;
  if (domain.empty()) {
    domain = domains.front();
    const auto lo = std::find(domains.begin(), domains.end(), "lo");
    if (reach.one_host && lo != domains.end()) domain = *lo;
    if (!reach.one_host && domain == "lo" && domains.size() > 1) domain = domains[1];
  } else if (std::find(domains.begin(), domains.end(), domain) == domains.end()) {
    fail(ExitCode::usage, "--ofi-domain: provider {} has no domain '{}' here (valid: {})", provider, domain,
         fmt::join(domains, ", "));
  }
  std::optional<std::size_t> first, with_rma;
  for (std::size_t i : mine) {
    if (offered[i].domain != domain) continue;
    if (!first) first = i;
    if (!with_rma && (offered[i].caps & ofi_bits::kRma)) with_rma = i;
  }
  return o.protocol != OfiProtocol::tagged && with_rma ? *with_rma : *first;
}

void check_same_ofi_provider(const std::vector<std::string>& chosen, const std::vector<std::string>& host_of) {
  for (std::size_t r = 1; r < chosen.size(); ++r)
    if (chosen[r] != chosen[0])
      fail(ExitCode::precondition,
           "ofi: rank 0 (host {}) chose provider {} and rank {} (host {}) chose {}: every rank "
           "must use one provider (name one with --ofi-provider that every host offers; `ccbench topo` lists them)",
           host_of.empty() ? "?" : host_of[0], chosen[0], r, r < host_of.size() ? host_of[r] : "?", chosen[r]);
}

// ------------------------------------------------------------------------------------ plan

namespace {

std::optional<std::string> rma_refusal(const OfiEndpointInfo& info) {
  using namespace ofi_bits;
  if (!(info.caps & kRma) || !(info.caps & kRemoteWrite)) return "the provider offers no RMA writes (FI_RMA)";
  if (info.cq_data_size < 4)
    return fmt::format("its remote CQ data holds {} bytes, ccbench's needs 4", info.cq_data_size);
  if (info.mode & kRxCqData) return "it consumes a posted receive per remote CQ data (FI_RX_CQ_DATA)";
  if (info.mr_key_size > 8) return fmt::format("its keys are {} bytes (FI_MR_RAW), more than 8", info.mr_key_size);
  return std::nullopt;
}

}  // namespace

OfiPlan plan_ofi(const OfiEndpointInfo& info, OfiProtocol wanted, std::uint64_t slot_bytes) {
  using namespace ofi_bits;
  if (const std::uint64_t extra = info.mode & ~kOfiModesHonoured)
    fail(ExitCode::precondition, "ofi: provider {} (domain {}) demands mode {}, which ccbench does not honour",
         info.provider, info.domain, ofi_mode_names(extra));
  if (const std::uint64_t extra = info.mr_mode & ~kOfiMrModesHonoured)
    fail(ExitCode::precondition,
         "ofi: provider {} (domain {}) demands memory registration mode {}, which ccbench "
         "does not honour",
         info.provider, info.domain, ofi_mr_mode_names(extra));
  if (!(info.caps & kTagged))
    fail(ExitCode::precondition,
         "ofi: provider {} (domain {}) offers no tagged messages (FI_TAGGED), which carry "
         "ccbench's credits",
         info.provider, info.domain);
  if (info.max_msg_size < slot_bytes)
    fail(ExitCode::precondition,
         "ofi: provider {} (domain {}) carries messages of up to {} bytes and the channels' "
         "slots are {} bytes (lower CCBENCH_CPU_SLOT_BYTES / CCBENCH_GPU_SLOT_BYTES)",
         info.provider, info.domain, info.max_msg_size, slot_bytes);
  OfiPlan p;
  p.local_desc = info.mr_mode & kMrLocal;
  p.virt_addr = info.mr_mode & kMrVirtAddr;
  p.prov_key = info.mr_mode & kMrProvKey;
  p.bind_endpoint = info.mr_mode & kMrEndpoint;
  p.hmem_iface = info.mr_mode & kMrHmem;
  p.hmem = info.caps & kHmem;
  const std::optional<std::string> no_rma = rma_refusal(info);
  if (wanted == OfiProtocol::rma && no_rma)
    fail(ExitCode::precondition, "--ofi-protocol rma: provider {} (domain {}) cannot carry it: {} (valid here: tagged)",
         info.provider, info.domain, *no_rma);
  if (wanted == OfiProtocol::tagged) {
    p.why_not_rma = "--ofi-protocol tagged";
  } else if (no_rma) {
    p.why_not_rma = *no_rma;
  } else {
    p.protocol = OfiProtocol::rma;
    p.length_in_data = info.cq_data_size >= 8;
    p.notify_after_write = p.length_in_data && ofi_writes_faster_without_data(info.provider);
  }
  p.inject_credits = info.inject_size >= kOfiCreditBytes;
  p.send_any_memory = !p.local_desc;
  return p;
}

bool ofi_writes_faster_without_data(std::string_view provider) { return provider == "shm"; }

std::uint64_t ofi_remote_address(const OfiPlan& plan, std::uint64_t base, std::uint64_t offset) {
  return plan.virt_addr ? base + offset : offset;
}

// --------------------------------------------------------------------- tags, data, cookies

namespace {

constexpr unsigned kSlotBits = 6, kTagBits = 20, kRankBits = 20;
constexpr unsigned kChannelBits = 26, kCookieSeqBits = 28;
// CQ data: channel and slot share the low 32 bits; the length (when carried) the high 32.
static_assert(kOfiMaxChannels == 1u << kChannelBits && kChannelBits + kSlotBits <= 32);

}  // namespace

std::uint64_t ofi_tag(OfiMsgKind kind, int sender, int channel_tag, std::uint32_t slot) {
  if (sender < 0 || sender >= kOfiMaxRanks || channel_tag < 0 || channel_tag >= (1 << kTagBits) ||
      slot >= static_cast<std::uint32_t>(kOfiMaxSlots))
    fail(ExitCode::runtime,
         "ofi: rank {}, channel tag {}, slot {} do not fit a tag (ranks below {}, tags below {}, "
         "slots below {})",
         sender, channel_tag, slot, kOfiMaxRanks, 1 << kTagBits, kOfiMaxSlots);
  return (static_cast<std::uint64_t>(kind) << (kRankBits + kTagBits + kSlotBits)) |
         (static_cast<std::uint64_t>(sender) << (kTagBits + kSlotBits)) |
         (static_cast<std::uint64_t>(channel_tag) << kSlotBits) | slot;
}

OfiTagFields decode_ofi_tag(std::uint64_t tag) {
  OfiTagFields f;
  f.slot = static_cast<std::uint32_t>(tag & ((1u << kSlotBits) - 1));
  f.channel_tag = static_cast<int>((tag >> kSlotBits) & ((1u << kTagBits) - 1));
  f.sender = static_cast<int>((tag >> (kSlotBits + kTagBits)) & ((1u << kRankBits) - 1));
  f.kind = static_cast<OfiMsgKind>((tag >> (kSlotBits + kTagBits + kRankBits)) & 3);
  return f;
}

std::uint64_t ofi_cq_data(std::uint32_t channel, std::uint32_t slot, bool length_in_data, std::uint64_t bytes) {
  if (channel >= kOfiMaxChannels || slot >= static_cast<std::uint32_t>(kOfiMaxSlots) ||
      (length_in_data && bytes > UINT32_MAX))
    fail(ExitCode::runtime,
         "ofi: channel {} slot {} ({} bytes) do not fit remote CQ data (channels below {}, slots "
         "below {}, under 4 GiB)",
         channel, slot, bytes, kOfiMaxChannels, kOfiMaxSlots);
  const std::uint64_t low = (channel << kSlotBits) | slot;
  return length_in_data ? (bytes << 32) | low : low;
}

OfiCqDataFields decode_ofi_cq_data(std::uint64_t data, bool length_in_data, std::size_t completion_len) {
  const auto d = static_cast<std::uint32_t>(data);
  return {d >> kSlotBits, d & ((1u << kSlotBits) - 1), length_in_data ? data >> 32 : completion_len};
}

std::uint64_t ofi_cookie(std::uint32_t channel, OfiOp op, std::uint64_t seq) {
  return (static_cast<std::uint64_t>(channel) << 32) | (static_cast<std::uint64_t>(op) << kCookieSeqBits) |
         (seq & ((1u << kCookieSeqBits) - 1));
}

OfiCookieFields decode_ofi_cookie(std::uint64_t cookie) {
  OfiCookieFields f;
  f.channel = static_cast<std::uint32_t>(cookie >> 32);
  f.op = static_cast<OfiOp>((cookie >> kCookieSeqBits) & 0xf);
  f.seq = static_cast<std::uint32_t>(cookie & ((1u << kCookieSeqBits) - 1));
  return f;
}

std::uint64_t ofi_unwrap_seq(std::uint32_t low, std::uint64_t oldest) {
  constexpr std::uint64_t kMod = 1ull << kCookieSeqBits;
  return oldest + ((low + kMod - oldest % kMod) % kMod);
}

std::string_view name(OfiOp op, OfiProtocol protocol) {
  switch (op) {
    case OfiOp::data_send: return protocol == OfiProtocol::rma ? "fi_writedata (data)" : "fi_tsend (data)";
    case OfiOp::data_recv: return "fi_trecv (data)";
    case OfiOp::credit_send: return "fi_tsend (credit)";
    case OfiOp::credit_recv: return "fi_trecv (credit)";
  }
  return "operation";
}

// ------------------------------------------------------------------------ connection data

namespace {

template <typename T>
void put(std::uint8_t* p, std::size_t& at, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    p[at++] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i));
}

template <typename T>
T get(const std::uint8_t* p, std::size_t& at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<std::uint64_t>(p[at++]) << (8 * i);
  return static_cast<T>(v);
}

// magic, version, protocol, reserved, rank, tag, channel, slots, key, base, bytes
constexpr std::size_t kConnUsed = 4 + 2 + 1 + 1 + 4 + 4 + 4 + 4 + 8 + 8 + 8;
static_assert(kConnUsed <= kOfiConnBytes, "connection data must fit its blob");

}  // namespace

OfiConnBlob encode_ofi_conn(const OfiConnData& d) {
  OfiConnBlob b{};
  std::size_t at = 0;
  put<std::uint32_t>(b.data(), at, kOfiConnMagic);
  put<std::uint16_t>(b.data(), at, kOfiConnVersion);
  put<std::uint8_t>(b.data(), at, static_cast<std::uint8_t>(d.protocol));
  put<std::uint8_t>(b.data(), at, 0);
  put<std::int32_t>(b.data(), at, d.rank);
  put<std::int32_t>(b.data(), at, d.tag);
  put<std::uint32_t>(b.data(), at, d.channel);
  put<std::uint32_t>(b.data(), at, d.slots);
  put<std::uint64_t>(b.data(), at, d.key);
  put<std::uint64_t>(b.data(), at, d.base);
  put<std::uint64_t>(b.data(), at, d.bytes);
  return b;
}

OfiConnData decode_ofi_conn(const std::uint8_t* data, std::size_t size, int peer, OfiProtocol expected) {
  if (size != kOfiConnBytes)
    fail(ExitCode::runtime, "ofi: connection data from rank {} is {} bytes, expected {} (a different ccbench build?)",
         peer, size, kOfiConnBytes);
  std::size_t at = 0;
  if (const auto magic = get<std::uint32_t>(data, at); magic != kOfiConnMagic)
    fail(ExitCode::runtime,
         "ofi: connection data from rank {} does not start with ccbench's magic ({:#x}, expected "
         "{:#x})",
         peer, magic, kOfiConnMagic);
  if (const auto version = get<std::uint16_t>(data, at); version != kOfiConnVersion)
    fail(ExitCode::runtime,
         "ofi: connection data from rank {} is version {}, this build speaks version {} (run the "
         "same ccbench build on every rank)",
         peer, version, kOfiConnVersion);
  OfiConnData d;
  const auto protocol = get<std::uint8_t>(data, at);
  at += 1;
  d.protocol = static_cast<OfiProtocol>(protocol);
  d.rank = get<std::int32_t>(data, at);
  d.tag = get<std::int32_t>(data, at);
  d.channel = get<std::uint32_t>(data, at);
  d.slots = get<std::uint32_t>(data, at);
  d.key = get<std::uint64_t>(data, at);
  d.base = get<std::uint64_t>(data, at);
  d.bytes = get<std::uint64_t>(data, at);
  if (d.rank != peer)
    fail(ExitCode::runtime, "ofi: connection data received from rank {} describes rank {}", peer, d.rank);
  if (protocol > static_cast<std::uint8_t>(OfiProtocol::tagged) || d.protocol != expected)
    fail(ExitCode::precondition,
         "ofi: rank {} carries the channel with tag {} as {} and this rank as {} (every rank "
         "must pass the same --ofi-protocol and see the same provider)",
         peer, d.tag, protocol > 2 ? std::string_view("?") : name(d.protocol), name(expected));
  if (d.slots == 0 || d.slots > static_cast<std::uint32_t>(kOfiMaxSlots) || d.channel >= kOfiMaxChannels)
    fail(ExitCode::runtime,
         "ofi: connection data from rank {} describes {} slots on channel {} (1 to {} slots, "
         "channels below {})",
         peer, d.slots, d.channel, kOfiMaxSlots, kOfiMaxChannels);
  if (expected == OfiProtocol::rma && (d.bytes == 0 || d.bytes % d.slots != 0))
    fail(ExitCode::runtime, "ofi: connection data from rank {} describes {} bytes in {} slots (non-zero, whole slots)",
         peer, d.bytes, d.slots);
  return d;
}

OfiAddrBlock encode_ofi_address(const std::vector<std::uint8_t>& addr) {
  if (addr.empty() || addr.size() > kOfiAddrBytes - 4)
    fail(ExitCode::runtime, "ofi: an endpoint address of {} bytes does not fit ccbench's {} (1 to {})", addr.size(),
         kOfiAddrBytes, kOfiAddrBytes - 4);
  OfiAddrBlock b{};
  std::size_t at = 0;
  put<std::uint32_t>(b.data(), at, static_cast<std::uint32_t>(addr.size()));
  std::memcpy(b.data() + at, addr.data(), addr.size());
  return b;
}

std::vector<std::uint8_t> decode_ofi_address(const OfiAddrBlock& block, int rank) {
  std::size_t at = 0;
  const auto n = get<std::uint32_t>(block.data(), at);
  if (n == 0 || n > kOfiAddrBytes - 4)
    fail(ExitCode::runtime, "ofi: rank {} sent an endpoint address of {} bytes (1 to {} are valid)", rank, n,
         kOfiAddrBytes - 4);
  return {block.begin() + 4, block.begin() + 4 + n};
}

// ---------------------------------------------------------------------------- labels, errors

namespace {

constexpr std::string_view kHmemSlots = "hmem", kHostSlots = "host";  // where GPU ranks' FIFO slots are

}  // namespace

std::string ofi_label(std::string_view provider, OfiProtocol protocol) {
  return fmt::format("{}:{}:{}", name(Transport::ofi), provider, name(protocol));
}

std::string ofi_net_label(std::string_view provider, bool hmem) {
  return fmt::format("{}:{}:{}", name(Transport::ofi), provider, hmem ? kHmemSlots : kHostSlots);
}

bool is_ofi_label(std::string_view label, bool net) {
  const std::string prefix = fmt::format("{}:", name(Transport::ofi));
  if (label.substr(0, prefix.size()) != prefix) return false;
  label.remove_prefix(prefix.size());
  const auto colon = label.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view provider = label.substr(0, colon), what = label.substr(colon + 1);
  if (provider.find_first_of(" \t\n,:+") != std::string_view::npos) return false;
  if (net) return what == kHmemSlots || what == kHostSlots;
  return what == name(OfiProtocol::rma) || what == name(OfiProtocol::tagged);
}

OfiErrorClass classify_ofi_error(int err) {
  switch (err) {
    case ECONNRESET:
    case ECONNABORTED:
    case ECONNREFUSED:
    case ENOTCONN:
    case EPIPE:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
    case ETIMEDOUT: return {ExitCode::runtime, "the peer's process or host is gone, or the link dropped"};
    case EACCES:
    case EPERM:
    case EKEYREJECTED: return {ExitCode::runtime, "remote key or registration rejected (rkey/MR mismatch)"};
    case EMSGSIZE:
    case kOfiErrTruncated: return {ExitCode::runtime, "message longer than the posted buffer"};
    case ECANCELED: return {ExitCode::runtime, "cancelled: the endpoint had already failed (see the first error)"};
    default: return {ExitCode::runtime, "provider or device failure"};
  }
}

std::string ofi_completion_message(std::string_view provider, std::string_view op, std::string_view peer, int err,
                                   std::string_view err_text, std::string_view prov_text) {
  return fmt::format("ofi ({}): {} to {} failed: {}{}: {}", provider, op, peer, err_text,
                     prov_text.empty() ? std::string() : fmt::format(" (provider: {})", prov_text),
                     classify_ofi_error(err).meaning);
}

}  // namespace ccbench
