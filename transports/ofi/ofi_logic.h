#pragma once
// The libfabric (ofi) transport's logic that needs no fabric: options, which provider and domain
// a job uses, what a provider's mode and memory-registration bits oblige us to do, which protocol
// carries the data (RMA writes with remote CQ data, or tagged messages), the tag and CQ-data
// layouts, the per-channel connection data, and what a failed completion means.
// transports/ofi/fabric.* is the only code of ccbench that calls libfabric; everything here is
// plain data and is unit-tested without a fabric (tests/unit/test_ofi_logic.cpp). Nothing in this
// header uses a libfabric type, so it builds and is tested with CCBENCH_WITH_LIBFABRIC=OFF too;
// the bit values below are libfabric's (fabric.cpp static_asserts each one).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/exit_code.h"

namespace ccbench {

// ---------------------------------------------------------------------------------------------
// Options (command line: --ofi-provider, --ofi-domain, --ofi-protocol; `hmem` follows
// --gpudirect). A bad value is Error(usage) naming the flag and what is valid.
// ---------------------------------------------------------------------------------------------
enum class OfiProtocol { automatic, rma, tagged };
inline constexpr std::array<OfiProtocol, 3> kOfiProtocols = {OfiProtocol::automatic, OfiProtocol::rma,
                                                             OfiProtocol::tagged};
std::string_view name(OfiProtocol p);  // "auto", "rma", "tagged"
// "auto", "rma" or "tagged"; Error(usage) naming `flag` otherwise.
OfiProtocol parse_ofi_protocol(std::string_view text, std::string_view flag);

struct OfiOptions {
  std::string provider;  // empty: the first of kOfiProviderOrder that every rank offers
  std::string domain;    // empty: chosen (choose_ofi_endpoint)
  OfiProtocol protocol = OfiProtocol::automatic;
  bool hmem = true;  // GPU ranks: FIFO slots in GPU memory where the provider takes it (FI_HMEM)
};
// Names are free text as libfabric spells them ("tcp;ofi_rxm", "cxi0"); whitespace and commas
// are Error(usage) naming the flag; empty names stand for ccbench's choice.
void validate_ofi_options(const OfiOptions& o);
// One name given to `flag` (`what`: "provider" or "domain"): as validate_ofi_options, and empty
// is Error(usage) too (leaving the flag out is how ccbench is left to choose).
void check_ofi_name(std::string_view value, std::string_view flag, std::string_view what);

// The default order of providers, best first, and why: NICs that bypass the kernel first (they are
// the fabric a job on such a cluster must measure): cxi (HPE Slingshot), efa (AWS), opx (Cornelis
// Omni-Path Express), psm3 (Intel Ethernet), psm2 (Omni-Path), verbs;ofi_rxm (InfiniBand, RoCE,
// iWARP); then shm, shared memory, when every rank is on one node; then sockets: tcp;ofi_rxm (TCP
// under libfabric's reliable-datagram layer), tcp, sockets (the old reference provider).
// Providers not listed (udp;ofi_rxd, net;ofi_rxm, hooks) are used only when named.
inline constexpr std::array<std::string_view, 10> kOfiProviderOrder = {
    "cxi", "efa", "opx", "psm3", "psm2", "verbs;ofi_rxm", "shm", "tcp;ofi_rxm", "tcp", "sockets"};
// The providers that move data through memory of one node only.
bool ofi_provider_is_local(std::string_view provider);
// Whether `wanted` (as the user typed it) names `provider`: the whole name ("tcp;ofi_rxm") or its
// core provider alone ("tcp" names "tcp;ofi_rxm" where no plain tcp endpoint is offered, and
// "verbs" names "verbs;ofi_rxm").
bool ofi_provider_matches(std::string_view wanted, std::string_view provider);

// ---------------------------------------------------------------------------------------------
// libfabric's bits, as plain constants.
// ---------------------------------------------------------------------------------------------
namespace ofi_bits {
// capabilities (fi_info.caps)
inline constexpr std::uint64_t kMsg = 1ull << 1, kRma = 1ull << 2, kTagged = 1ull << 3, kRead = 1ull << 8,
                               kWrite = 1ull << 9, kRecv = 1ull << 10, kSend = 1ull << 11, kRemoteWrite = 1ull << 13,
                               kHmem = 1ull << 47, kLocalComm = 1ull << 51, kRemoteComm = 1ull << 52;
// mode bits (fi_info.mode): what the provider asks of the application
inline constexpr std::uint64_t kContext = 1ull << 59, kMsgPrefix = 1ull << 58, kAsyncIov = 1ull << 57,
                               kRxCqData = 1ull << 56, kLocalMr = 1ull << 55, kContext2 = 1ull << 52,
                               kBufferedRecv = 1ull << 51;
// memory-registration modes (fi_domain_attr.mr_mode)
inline constexpr std::uint64_t kMrBasic = 1ull << 0, kMrScalable = 1ull << 1, kMrLocal = 1ull << 2, kMrRaw = 1ull << 3,
                               kMrVirtAddr = 1ull << 4, kMrAllocated = 1ull << 5, kMrProvKey = 1ull << 6,
                               kMrMmuNotify = 1ull << 7, kMrRmaEvent = 1ull << 8, kMrEndpoint = 1ull << 9,
                               kMrHmem = 1ull << 10;
}  // namespace ofi_bits

// The mode and mr_mode bits this transport honours, which fabric.cpp offers in its hints (a
// provider that demands any other bit is never returned by fi_getinfo):
//   FI_CONTEXT, FI_CONTEXT2  every operation's context is an fi_context2 owned until completion
//   FI_ASYNC_IOV             buffers stay untouched until completion anyway
//   FI_RX_CQ_DATA            accepted, and then remote CQ data is not used (tagged messages)
//   FI_MR_LOCAL              local buffers are registered and their descriptors passed
//   FI_MR_VIRT_ADDR          remote addresses are virtual addresses (else offsets into the region)
//   FI_MR_ALLOCATED          only allocated memory is registered (it always is)
//   FI_MR_PROV_KEY           keys come from the provider (else ccbench requests unique ones)
//   FI_MR_ENDPOINT           regions are bound to the endpoint and enabled before use
//   FI_MR_HMEM               GPU memory is registered with its interface (CUDA) and device
// Not honoured: FI_MSG_PREFIX, FI_BUFFERED_RECV, FI_MR_RAW (keys over 64 bits), FI_MR_MMU_NOTIFY,
// FI_MR_RMA_EVENT.
inline constexpr std::uint64_t kOfiModesHonoured =
    ofi_bits::kContext | ofi_bits::kContext2 | ofi_bits::kAsyncIov | ofi_bits::kRxCqData;
inline constexpr std::uint64_t kOfiMrModesHonoured = ofi_bits::kMrLocal | ofi_bits::kMrVirtAddr |
                                                     ofi_bits::kMrAllocated | ofi_bits::kMrProvKey |
                                                     ofi_bits::kMrEndpoint | ofi_bits::kMrHmem;

// "FI_CONTEXT|FI_MR_LOCAL"-style names of the bits set in `mode` and `mr_mode` (unknown ones in hex).
std::string ofi_mode_names(std::uint64_t mode);
std::string ofi_mr_mode_names(std::uint64_t mr_mode);

// ---------------------------------------------------------------------------------------------
// What fi_getinfo offers: one entry per (provider, domain, fabric, capability set).
// ---------------------------------------------------------------------------------------------
struct OfiEndpointInfo {
  std::string provider;  // fabric_attr->prov_name: "tcp;ofi_rxm", "shm", "efa", "cxi"
  std::string domain;    // domain_attr->name: "lo", "eth0", "rdmap0s6-rdm", "cxi0"
  std::string fabric;    // fabric_attr->name: "127.0.0.1/32", "efa", "cxi"
  std::uint64_t caps = 0, mode = 0, mr_mode = 0;
  std::size_t cq_data_size = 0;          // bytes of remote CQ data (0: none)
  std::uint64_t max_msg_size = 0;        // ep_attr->max_msg_size
  std::size_t mr_key_size = 0;           // bytes of a registration key
  std::size_t tx_size = 0, rx_size = 0;  // operations each queue takes before FI_EAGAIN
  std::size_t inject_size = 0;           // tx_attr->inject_size: the most bytes an injected post carries
};

// Where the ranks are: whether they share one host and one node (emulated nodes count as nodes).
struct OfiReach {
  bool one_host = true;
  bool one_node = true;
};

// The entry of `offered` this rank uses (its index), following `o`:
//   provider given   its entries (ofi_provider_matches); Error(usage) when libfabric knows no such
//                    provider (neither in `known`, the providers this libfabric has, nor offered),
//                    listing the providers it knows and those offering endpoints here;
//                    Error(precondition) when it knows it but it offers no usable endpoint here
//                    (no device), or it is shm and the ranks span nodes;
//   provider empty   the first of kOfiProviderOrder offered here (shm only on one node);
//                    Error(precondition) listing what is offered when none is;
//   domain given     that domain of the provider; Error(usage) listing the provider's domains;
//   domain empty     on one host the loopback domain ("lo") where the provider has one, across
//                    hosts the first other domain, else the provider's first;
// within that, an entry with RMA unless o.protocol is tagged. Same choice on ranks of one host.
std::size_t choose_ofi_endpoint(const std::vector<OfiEndpointInfo>& offered, const std::vector<std::string>& known,
                                const OfiOptions& o, const OfiReach& reach);

// "tcp;ofi_rxm (lo, eth0), shm (shm)": providers and their domains, for messages and `ccbench topo`.
std::string describe_ofi_offers(const std::vector<OfiEndpointInfo>& offered);

// Every rank's chosen provider (index = rank) must be the same: Error(precondition) naming the
// first rank that differs from rank 0, both choices and hosts (`host_of` by rank) otherwise.
void check_same_ofi_provider(const std::vector<std::string>& chosen, const std::vector<std::string>& host_of);

// ---------------------------------------------------------------------------------------------
// What an entry obliges us to do, and which protocol carries the data.
//   rma     the receiver's slots are registered for remote writes; each slot goes as one write
//           into the receiver's slot of the same index, and remote CQ data naming the channel and
//           slot (ofi_cq_data) tells the receiver it landed, with the slot's bytes where the CQ
//           data has 8 bytes (tcp;ofi_rxm reports no length for remote writes: measured here, len
//           0); with 4 bytes (efa, verbs) the length is the completion's, as fi_cq(3) specifies for
//           remote writes with CQ data and aws-ofi-nccl relies on over EFA. The CQ data rides on the
//           write itself (fi_writedata), or, where the provider moves writes without CQ data faster
//           (notify_after_write), the write goes bare (fi_write) and a write of no bytes carrying
//           the CQ data follows once the write has completed (fi_inject_writedata).
//   tagged  the receiver posts one tagged receive per free slot into that slot; each slot goes as
//           one fi_tsend whose tag names sender, channel and slot (ofi_tag).
// Either way credits go back as tagged 8-byte messages carrying the count of slots released,
// injected (fi_tinject: no completion, no buffer held) where the provider's inject size takes 8.
// ---------------------------------------------------------------------------------------------
struct OfiPlan {
  OfiProtocol protocol = OfiProtocol::tagged;  // rma or tagged
  std::string why_not_rma;                     // automatic and tagged: why (empty when rma)
  bool local_desc = false;                     // FI_MR_LOCAL: pass the descriptors of registered local buffers
  bool virt_addr = false;                      // FI_MR_VIRT_ADDR: remote addresses are virtual, else region offsets
  bool prov_key = false;                       // FI_MR_PROV_KEY: the provider picks keys, else we request unique ones
  bool bind_endpoint = false;                  // FI_MR_ENDPOINT: fi_mr_bind to the endpoint, then fi_mr_enable
  bool hmem_iface = false;                     // FI_MR_HMEM: GPU memory is registered with iface CUDA and its device
  bool hmem = false;                           // the entry carries GPU memory (FI_HMEM capability)
  bool length_in_data = false;                 // rma: the remote CQ data carries the slot's length (8 bytes of it)
  bool notify_after_write = false;             // rma: fi_write, then the CQ data alone once it completed
  bool inject_credits = false;                 // credits go as fi_tinject (inject size >= 8 bytes)
  // Sends may go from host memory never registered (no FI_MR_LOCAL; FI_MR_HMEM asks it for GPU
  // memory only: fi_mr(3)), so the channels offer their zero-copy send end for any of the caller's
  // host memory.
  bool send_any_memory = false;
};

// Whether `provider` moves a write without remote CQ data by a faster path than one with it.
// libfabric's shm (1.17, smr_generic_rma): a write without CQ data, with FI_MR_VIRT_ADDR and no
// RMA ordering asked, is copied by the writer itself (process_vm_writev inside fi_write, "fast
// RMA"); with CQ data it becomes a command the receiver carries out, pulling the bytes with
// process_vm_readv inside its own fi_cq_read: the receiver then copies every byte twice (the pull
// and its own read of the slot) on one core, which halved the channel's rate (issue 34).
// The notification's order is safe there: a write's completion means its bytes are in the target's
// memory (the writer copied them, or, without CMA, the receiver processed the write: fi_shm(7)), and
// the notification is posted only after that completion.
bool ofi_writes_faster_without_data(std::string_view provider);

// The plan for `info` moving slots of `slot_bytes`: Error(precondition) naming the provider and the
// bit when `info` demands a mode this transport does not honour, when its largest message is
// smaller than a slot, or when `wanted` is rma and it cannot carry rma (saying why); automatic
// takes rma where the entry has FI_RMA and remote CQ data of at least 4 bytes, does not consume a
// receive per CQ data (FI_RX_CQ_DATA), and keys fit 64 bits.
OfiPlan plan_ofi(const OfiEndpointInfo& info, OfiProtocol wanted, std::uint64_t slot_bytes);

// The address a remote write names for byte `offset` of a region registered at virtual address
// `base`: base + offset with FI_MR_VIRT_ADDR, offset alone otherwise.
std::uint64_t ofi_remote_address(const OfiPlan& plan, std::uint64_t base, std::uint64_t offset);

// ---------------------------------------------------------------------------------------------
// Tags, CQ data and operation cookies.
// ---------------------------------------------------------------------------------------------
// A tag: kind (2 bits) | sender rank (20) | channel tag (20) | slot (6): 48 bits, within what every
// provider of kOfiProviderOrder matches. Error(runtime) for a rank, tag or slot out of range.
enum class OfiMsgKind : std::uint32_t { data = 1, credit = 2 };
inline constexpr std::size_t kOfiCreditBytes = 8;  // a credit: the count of slots released, u64
inline constexpr int kOfiMaxRanks = 1 << 20;
inline constexpr int kOfiMaxSlots = 64;  // the deepest channel (CCBENCH_CPU_SLOT_DEPTH's bound)
std::uint64_t ofi_tag(OfiMsgKind kind, int sender, int channel_tag, std::uint32_t slot);
struct OfiTagFields {
  OfiMsgKind kind = OfiMsgKind::data;
  int sender = 0, channel_tag = 0;
  std::uint32_t slot = 0;
};
OfiTagFields decode_ofi_tag(std::uint64_t tag);

// Remote CQ data of an rma slot: the receiver's channel number (26 bits, given in its connection
// data) and the slot (6 bits) in the low 4 bytes, the smallest remote CQ data of the providers of
// interest (efa, verbs), so that completions can arrive in any order; with `length_in_data`, the
// slot's bytes in the high 4 (Error(runtime) for 4 GiB or more).
inline constexpr std::uint32_t kOfiMaxChannels = 1u << 26;
std::uint64_t ofi_cq_data(std::uint32_t channel, std::uint32_t slot, bool length_in_data, std::uint64_t bytes);
struct OfiCqDataFields {
  std::uint32_t channel = 0, slot = 0;
  std::uint64_t bytes = 0;  // length_in_data: the slot's bytes; otherwise `completion_len`
};
OfiCqDataFields decode_ofi_cq_data(std::uint64_t data, bool length_in_data, std::size_t completion_len);

// An operation's cookie: the channel (32 bits), its kind (4) and its post number (28 bits,
// wrapping): what a completion hands back to the channel that posted it.
enum class OfiOp : std::uint32_t { data_send = 1, data_recv = 2, credit_send = 3, credit_recv = 4 };
std::uint64_t ofi_cookie(std::uint32_t channel, OfiOp op, std::uint64_t seq);
struct OfiCookieFields {
  std::uint32_t channel = 0;
  OfiOp op = OfiOp::data_send;
  std::uint32_t seq = 0;  // post number modulo 2^28
};
OfiCookieFields decode_ofi_cookie(std::uint64_t cookie);
// The post number whose low 28 bits are `low`, at or after `oldest` (the oldest outstanding post):
// fewer than 2^28 posts are ever outstanding on one channel.
std::uint64_t ofi_unwrap_seq(std::uint32_t low, std::uint64_t oldest);
std::string_view name(OfiOp op, OfiProtocol protocol);  // "fi_writedata (data)", "fi_tsend (credit)", ...

// ---------------------------------------------------------------------------------------------
// Connection data: what each end of a channel tells the other over MPI, a fixed-size blob.
// Layout (little-endian, kOfiConnBytes): magic u32, version u16, protocol u8, reserved u8, rank
// i32, tag i32, channel u32, slots u32, key u64, base u64, bytes u64.
// ---------------------------------------------------------------------------------------------
inline constexpr std::uint32_t kOfiConnMagic = 0x3169666f;  // "ofi1"
inline constexpr std::uint16_t kOfiConnVersion = 1;
inline constexpr std::size_t kOfiConnBytes = 64;
struct OfiConnData {
  OfiProtocol protocol = OfiProtocol::tagged;
  int rank = -1, tag = 0;
  std::uint32_t channel = 0;  // the writer's channel number (its CQ data names it)
  std::uint32_t slots = 0;
  std::uint64_t key = 0;    // rma receivers: the slots' registration key
  std::uint64_t base = 0;   // rma receivers: the address of slot 0 remote writes name
  std::uint64_t bytes = 0;  // rma receivers: the registered bytes
  bool operator==(const OfiConnData&) const = default;
};
using OfiConnBlob = std::array<std::uint8_t, kOfiConnBytes>;
OfiConnBlob encode_ofi_conn(const OfiConnData& d);
// Decodes `size` bytes received from rank `peer`; Error(runtime) naming the peer and the field for
// a short blob, a wrong magic or version, another rank, or a protocol other than `expected`.
OfiConnData decode_ofi_conn(const std::uint8_t* data, std::size_t size, int peer, OfiProtocol expected);

// Endpoint addresses (fi_getname) travel as fixed blocks of kOfiAddrBytes: length u32, bytes.
inline constexpr std::size_t kOfiAddrBytes = 256;
using OfiAddrBlock = std::array<std::uint8_t, kOfiAddrBytes>;
OfiAddrBlock encode_ofi_address(const std::vector<std::uint8_t>& addr);  // Error(runtime) when too long
std::vector<std::uint8_t> decode_ofi_address(const OfiAddrBlock& block, int rank);

// ---------------------------------------------------------------------------------------------
// Labels and errors.
// ---------------------------------------------------------------------------------------------
// The transport column: "ofi:tcp;ofi_rxm:rma" (CPU channels), "ofi:shm:tagged".
std::string ofi_label(std::string_view provider, OfiProtocol protocol);
// GPU ranks' net backend, after "net/": "ofi:efa:hmem" (FIFO slots in GPU memory, FI_HMEM) or
// "ofi:tcp;ofi_rxm:host" (staged through pinned host memory).
std::string ofi_net_label(std::string_view provider, bool hmem);
// Whether `label` is one ofi_label() (`net` false) or ofi_net_label() (`net` true) writes: the
// provider any name without blanks, commas, colons or '+'. Compare, accept and history read them.
bool is_ofi_label(std::string_view label, bool net);

// What a failed completion's error (a positive errno value, as libfabric's FI_E* are) usually
// means, and its exit code (runtime for all: the fabric failed, not the input).
inline constexpr int kOfiErrTruncated = 265;  // FI_ETRUNC
struct OfiErrorClass {
  ExitCode code = ExitCode::runtime;
  std::string_view meaning;
};
OfiErrorClass classify_ofi_error(int err);
// "ofi (tcp;ofi_rxm): fi_writedata (data) to rank 1 (host b) failed: Connection reset by peer
// (provider: <prov_text>): the peer's process or host is gone, or the link dropped".
std::string ofi_completion_message(std::string_view provider, std::string_view op, std::string_view peer, int err,
                                   std::string_view err_text, std::string_view prov_text);

}  // namespace ccbench
