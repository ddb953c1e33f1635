// The libfabric transport's logic without a fabric (transports/ofi/ofi_logic.h): options, the
// provider and domain choice, what each mode and memory-registration bit a provider can demand
// makes ccbench do (the providers of interest described as fi_info reports them: efa, cxi,
// verbs;ofi_rxm, psm3, and tcp;ofi_rxm and shm as they are on this machine), which protocol
// carries the data, the tag / CQ-data / cookie layouts, the connection data, and failed completions.
// EFA, cxi, verbs and PSM3 never ran here: these tests are what checks their bits.
#include <cerrno>

#include <gtest/gtest.h>

#include "core/error.h"
#include "tests/unit/expect_error.h"
#include "transports/net/slot_flow.h"
#include "transports/ofi/ofi_logic.h"

namespace ccbench {
namespace {

using namespace ofi_bits;

constexpr std::uint64_t kRmaCaps = kMsg | kRma | kTagged | kRead | kWrite | kRecv | kSend | kRemoteWrite;
constexpr std::uint64_t kTagCaps = kMsg | kTagged | kRecv | kSend;

OfiEndpointInfo endpoint(std::string provider, std::string domain, std::uint64_t caps = kRmaCaps,
                         std::uint64_t mode = 0, std::uint64_t mr_mode = 0, std::size_t cq_data = 8) {
  OfiEndpointInfo e;
  e.provider = std::move(provider);
  e.domain = std::move(domain);
  e.fabric = e.domain;
  e.caps = caps;
  e.mode = mode;
  e.mr_mode = mr_mode;
  e.cq_data_size = cq_data;
  e.max_msg_size = 1ull << 30;
  e.mr_key_size = 8;
  return e;
}

// This machine's fi_info (libfabric 1.17, Debian): tcp;ofi_rxm on eth0 and lo, shm, sockets.
std::vector<OfiEndpointInfo> here() {
  return {endpoint("tcp;ofi_rxm", "eth0"), endpoint("tcp;ofi_rxm", "lo"),
          endpoint("shm", "shm", kRmaCaps | kHmem, 0, kMrVirtAddr | kMrHmem), endpoint("sockets", "eth0"),
          endpoint("sockets", "lo")};
}
const std::vector<std::string> kKnownHere = {"psm2", "ofi_rxm", "shm", "udp", "tcp", "sockets"};

// The bits their man pages (fi_efa(7), fi_cxi(7), fi_verbs(7), fi_psm3(7)) say they demand, with
// their remote CQ data sizes; never run here.
OfiEndpointInfo efa() {
  return endpoint("efa", "rdmap0s6-rdm", kRmaCaps | kHmem, 0,
                  kMrLocal | kMrVirtAddr | kMrAllocated | kMrProvKey | kMrHmem, 4);
}
OfiEndpointInfo cxi() {
  return endpoint("cxi", "cxi0", kRmaCaps | kHmem, kContext, kMrEndpoint | kMrAllocated | kMrProvKey | kMrHmem, 8);
}
OfiEndpointInfo verbs() {
  return endpoint("verbs;ofi_rxm", "mlx5_0", kRmaCaps, 0, kMrLocal | kMrVirtAddr | kMrAllocated | kMrProvKey, 4);
}
OfiEndpointInfo psm3() { return endpoint("psm3", "psm3", kRmaCaps, kContext, 0, 8); }

// -------------------------------------------------------------------------------- options

TEST(OfiOptions, ProtocolNamesAndBadNames) {
  EXPECT_EQ(parse_ofi_protocol("auto", "--ofi-protocol"), OfiProtocol::automatic);
  EXPECT_EQ(parse_ofi_protocol("rma", "--ofi-protocol"), OfiProtocol::rma);
  EXPECT_EQ(parse_ofi_protocol("tagged", "--ofi-protocol"), OfiProtocol::tagged);
  expect_error([] { parse_ofi_protocol("rdma", "--ofi-protocol"); }, ExitCode::usage,
               {"--ofi-protocol", "'rdma'", "auto, rma, tagged"});
  OfiOptions o;
  EXPECT_NO_THROW(validate_ofi_options(o));
  o.provider = "tcp, shm";
  expect_error([&] { validate_ofi_options(o); }, ExitCode::usage, {"--ofi-provider", "'tcp, shm'", "ccbench topo"});
  o.provider = "tcp;ofi_rxm";
  o.domain = "lo eth0";
  expect_error([&] { validate_ofi_options(o); }, ExitCode::usage, {"--ofi-domain"});
}

TEST(OfiProviders, NamesMatchWholeOrCoreProvider) {
  EXPECT_TRUE(ofi_provider_matches("tcp;ofi_rxm", "tcp;ofi_rxm"));
  EXPECT_TRUE(ofi_provider_matches("tcp", "tcp;ofi_rxm"));
  EXPECT_TRUE(ofi_provider_matches("verbs", "verbs;ofi_rxm"));
  EXPECT_FALSE(ofi_provider_matches("ofi_rxm", "tcp;ofi_rxm"));
  EXPECT_FALSE(ofi_provider_matches("tc", "tcp;ofi_rxm"));
  EXPECT_TRUE(ofi_provider_is_local("shm"));
  EXPECT_FALSE(ofi_provider_is_local("tcp;ofi_rxm"));
}

// ---------------------------------------------------------------------- provider choice

TEST(OfiChoice, DefaultOrderOnThisMachine) {
  const auto offered = here();
  // One node: shm, before the sockets.
  EXPECT_EQ(offered[choose_ofi_endpoint(offered, kKnownHere, {}, {true, true})].provider, "shm");
  // Emulated nodes on one host: shm cannot reach across nodes; tcp;ofi_rxm over loopback.
  const OfiEndpointInfo& e = offered[choose_ofi_endpoint(offered, kKnownHere, {}, {true, false})];
  EXPECT_EQ(e.provider, "tcp;ofi_rxm");
  EXPECT_EQ(e.domain, "lo");
  // Several hosts: not the loopback domain.
  EXPECT_EQ(offered[choose_ofi_endpoint(offered, kKnownHere, {}, {false, false})].domain, "eth0");
}

TEST(OfiChoice, NicProvidersComeFirst) {
  std::vector<OfiEndpointInfo> aws = here();
  aws.push_back(efa());
  EXPECT_EQ(aws[choose_ofi_endpoint(aws, kKnownHere, {}, {true, true})].provider, "efa");
  std::vector<OfiEndpointInfo> slingshot = {verbs(), cxi(), endpoint("tcp;ofi_rxm", "hsn0")};
  EXPECT_EQ(slingshot[choose_ofi_endpoint(slingshot, {}, {}, {false, false})].provider, "cxi");
  std::vector<OfiEndpointInfo> ib = {endpoint("tcp;ofi_rxm", "ib0"), verbs()};
  EXPECT_EQ(ib[choose_ofi_endpoint(ib, {}, {}, {false, false})].provider, "verbs;ofi_rxm");
}

TEST(OfiChoice, ForcedProviderAndDomain) {
  const auto offered = here();
  OfiOptions o;
  o.provider = "tcp";  // the core name reaches tcp;ofi_rxm
  EXPECT_EQ(offered[choose_ofi_endpoint(offered, kKnownHere, o, {true, true})].provider, "tcp;ofi_rxm");
  o.domain = "eth0";
  EXPECT_EQ(offered[choose_ofi_endpoint(offered, kKnownHere, o, {true, true})].domain, "eth0");
  o.domain = "ib0";
  expect_error([&] { choose_ofi_endpoint(offered, kKnownHere, o, {true, true}); }, ExitCode::usage,
               {"--ofi-domain", "provider tcp;ofi_rxm has no domain 'ib0'", "valid: eth0, lo"});
  o = {};
  o.provider = "efa";  // not in this libfabric at all: a usage error listing what exists
  expect_error([&] { choose_ofi_endpoint(offered, kKnownHere, o, {true, true}); }, ExitCode::usage,
               {"--ofi-provider: 'efa' is not a provider of this libfabric", "it has: psm2, ofi_rxm, shm",
                "tcp;ofi_rxm (eth0, lo), shm (shm), sockets (eth0, lo)"});
  o.provider = "psm2";  // known, but no device here: a precondition
  expect_error([&] { choose_ofi_endpoint(offered, kKnownHere, o, {true, true}); }, ExitCode::precondition,
               {"provider psm2 offers no reliable-datagram endpoint", "offered: tcp;ofi_rxm"});
  o.provider = "shm";
  expect_error([&] { choose_ofi_endpoint(offered, kKnownHere, o, {true, false}); }, ExitCode::precondition,
               {"provider shm moves data within one node", "(emulated)"});
  expect_error([&] { choose_ofi_endpoint({}, kKnownHere, {}, {true, true}); }, ExitCode::precondition,
               {"none of the providers ccbench takes by default", "offered: none"});
}

TEST(OfiChoice, RmaEntryPreferredUnlessTaggedAsked) {
  std::vector<OfiEndpointInfo> offered = {endpoint("psm3", "psm3", kTagCaps), psm3()};
  EXPECT_EQ(choose_ofi_endpoint(offered, {}, {}, {true, true}), 1u);
  OfiOptions o;
  o.protocol = OfiProtocol::tagged;
  EXPECT_EQ(choose_ofi_endpoint(offered, {}, o, {true, true}), 0u);
}

TEST(OfiChoice, EveryRankMustAgree) {
  EXPECT_NO_THROW(check_same_ofi_provider({"efa", "efa", "efa"}, {"a", "b", "c"}));
  expect_error([] { check_same_ofi_provider({"efa", "efa", "tcp;ofi_rxm"}, {"a", "b", "c"}); },
               ExitCode::precondition, {"rank 0 (host a) chose provider efa and rank 2 (host c) chose tcp;ofi_rxm"});
}

// ------------------------------------------------------------------- mode bits and plans

TEST(OfiPlan, EachHonouredBitChangesWhatIsDone) {
  const OfiPlan plain = plan_ofi(endpoint("tcp;ofi_rxm", "lo"), OfiProtocol::automatic, 256 * 1024);
  EXPECT_EQ(plain.protocol, OfiProtocol::rma);
  EXPECT_FALSE(plain.local_desc || plain.virt_addr || plain.prov_key || plain.bind_endpoint || plain.hmem_iface);
  EXPECT_TRUE(plain.length_in_data);  // 8 bytes of CQ data: the length travels in it

  const OfiPlan e = plan_ofi(efa(), OfiProtocol::automatic, 256 * 1024);
  EXPECT_EQ(e.protocol, OfiProtocol::rma);
  EXPECT_TRUE(e.local_desc);      // FI_MR_LOCAL: descriptors of registered local buffers
  EXPECT_TRUE(e.virt_addr);       // FI_MR_VIRT_ADDR: remote writes name virtual addresses
  EXPECT_TRUE(e.prov_key);        // FI_MR_PROV_KEY: the provider's keys
  EXPECT_TRUE(e.hmem_iface && e.hmem);
  EXPECT_FALSE(e.length_in_data);  // 4 bytes of CQ data: the completion's length

  const OfiPlan c = plan_ofi(cxi(), OfiProtocol::automatic, 256 * 1024);
  EXPECT_TRUE(c.bind_endpoint);  // FI_MR_ENDPOINT: bound to the endpoint and enabled
  EXPECT_FALSE(c.virt_addr);     // offsets into the region
  EXPECT_TRUE(c.length_in_data);

  const OfiPlan v = plan_ofi(verbs(), OfiProtocol::automatic, 256 * 1024);
  EXPECT_EQ(v.protocol, OfiProtocol::rma);
  EXPECT_TRUE(v.local_desc && v.virt_addr && v.prov_key && !v.hmem);

  EXPECT_EQ(plan_ofi(psm3(), OfiProtocol::automatic, 4096).protocol, OfiProtocol::rma);  // FI_CONTEXT honoured
}

// libfabric's shm copies a write without remote CQ data itself, inside fi_write; with CQ data the
// receiver pulls the bytes: so over shm the data goes as fi_write and the CQ data follows alone.
// Everywhere else the CQ data rides on the write. Credits are injected where 8 bytes can be, and
// sends go from unregistered memory where no descriptor is asked.
TEST(OfiPlan, ShmWritesBareThenNotifiesCreditsAreInjected) {
  OfiEndpointInfo shm = here()[2];
  shm.inject_size = 4096;
  const OfiPlan s = plan_ofi(shm, OfiProtocol::automatic, 256 * 1024);
  EXPECT_EQ(s.protocol, OfiProtocol::rma);
  EXPECT_TRUE(s.notify_after_write && s.length_in_data);
  EXPECT_TRUE(s.inject_credits);
  EXPECT_TRUE(s.send_any_memory);  // FI_MR_HMEM asks registration of GPU memory only

  OfiEndpointInfo rxm = endpoint("tcp;ofi_rxm", "lo");
  rxm.inject_size = 64;
  const OfiPlan t = plan_ofi(rxm, OfiProtocol::automatic, 256 * 1024);
  EXPECT_FALSE(t.notify_after_write);  // fi_writedata
  EXPECT_TRUE(t.inject_credits && t.send_any_memory);

  EXPECT_FALSE(plan_ofi(shm, OfiProtocol::tagged, 4096).notify_after_write);  // tagged: no writes at all
  OfiEndpointInfo short_data = shm;
  short_data.cq_data_size = 4;  // the notice must carry the length: 8 bytes of CQ data
  EXPECT_FALSE(plan_ofi(short_data, OfiProtocol::automatic, 4096).notify_after_write);
  OfiEndpointInfo tiny = rxm;
  tiny.inject_size = 4;
  EXPECT_FALSE(plan_ofi(tiny, OfiProtocol::automatic, 4096).inject_credits);  // sent from credit buffers
  EXPECT_FALSE(plan_ofi(efa(), OfiProtocol::automatic, 4096).send_any_memory);  // FI_MR_LOCAL
  EXPECT_TRUE(ofi_writes_faster_without_data("shm"));
  EXPECT_FALSE(ofi_writes_faster_without_data("tcp;ofi_rxm"));
}

TEST(OfiPlan, BitsNotHonouredAreRefusedByName) {
  expect_error([] { plan_ofi(endpoint("x", "d", kRmaCaps, kMsgPrefix), OfiProtocol::automatic, 4096); },
               ExitCode::precondition, {"provider x (domain d) demands mode FI_MSG_PREFIX"});
  expect_error([] { plan_ofi(endpoint("x", "d", kRmaCaps, kBufferedRecv | kContext), OfiProtocol::automatic, 4096); },
               ExitCode::precondition, {"mode FI_BUFFERED_RECV"});
  expect_error([] { plan_ofi(endpoint("x", "d", kRmaCaps, 0, kMrRaw | kMrLocal), OfiProtocol::automatic, 4096); },
               ExitCode::precondition, {"memory registration mode FI_MR_RAW"});
  expect_error([] { plan_ofi(endpoint("x", "d", kRmaCaps, 0, kMrMmuNotify), OfiProtocol::automatic, 4096); },
               ExitCode::precondition, {"FI_MR_MMU_NOTIFY"});
  expect_error([] { plan_ofi(endpoint("x", "d", kRmaCaps, 0, kMrRmaEvent), OfiProtocol::automatic, 4096); },
               ExitCode::precondition, {"FI_MR_RMA_EVENT"});
  // The pre-1.5 FI_MR_SCALABLE bit is not among those ccbench offers.
  expect_error([] { plan_ofi(endpoint("x", "d", kRmaCaps, kContext2, kMrScalable), OfiProtocol::automatic, 4096); },
               ExitCode::precondition, {"FI_MR_SCALABLE"});
  expect_error([] { plan_ofi(endpoint("x", "d", kMsg | kRma | kSend | kRecv), OfiProtocol::automatic, 4096); },
               ExitCode::precondition, {"no tagged messages (FI_TAGGED)"});
  OfiEndpointInfo small = endpoint("x", "d");
  small.max_msg_size = 65536;
  expect_error([&] { plan_ofi(small, OfiProtocol::automatic, 256 * 1024); }, ExitCode::precondition,
               {"messages of up to 65536 bytes", "slots are 262144 bytes"});
  EXPECT_EQ(ofi_mode_names(kContext | kRxCqData | (1ull << 40)), "FI_CONTEXT|FI_RX_CQ_DATA|0x10000000000");
  EXPECT_EQ(ofi_mr_mode_names(0), "none");
}

TEST(OfiPlan, TaggedWhereRmaCannotCarryTheSlots) {
  struct Case {
    OfiEndpointInfo info;
    const char* why;
  };
  OfiEndpointInfo raw = endpoint("x", "d");
  raw.mr_key_size = 16;
  const Case cases[] = {
      {endpoint("x", "d", kTagCaps), "no RMA writes (FI_RMA)"},
      {endpoint("x", "d", kRmaCaps, 0, 0, 0), "remote CQ data holds 0 bytes"},
      {endpoint("x", "d", kRmaCaps, kRxCqData), "consumes a posted receive per remote CQ data (FI_RX_CQ_DATA)"},
      {raw, "keys are 16 bytes"},
  };
  for (const Case& c : cases) {
    const OfiPlan p = plan_ofi(c.info, OfiProtocol::automatic, 4096);
    EXPECT_EQ(p.protocol, OfiProtocol::tagged);
    EXPECT_NE(p.why_not_rma.find(c.why), std::string::npos) << p.why_not_rma;
    expect_error([&] { plan_ofi(c.info, OfiProtocol::rma, 4096); }, ExitCode::precondition,
                 {"--ofi-protocol rma: provider x (domain d) cannot carry it", c.why, "valid here: tagged"});
  }
  const OfiPlan forced = plan_ofi(efa(), OfiProtocol::tagged, 4096);
  EXPECT_EQ(forced.protocol, OfiProtocol::tagged);
  EXPECT_EQ(forced.why_not_rma, "--ofi-protocol tagged");
  EXPECT_TRUE(forced.local_desc);  // the registration bits hold whatever the protocol
}

TEST(OfiPlan, RemoteAddressesFollowVirtAddr) {
  OfiPlan p;
  p.virt_addr = true;
  EXPECT_EQ(ofi_remote_address(p, 0x7f0000001000, 0x40000), 0x7f0000041000u);
  p.virt_addr = false;
  EXPECT_EQ(ofi_remote_address(p, 0x7f0000001000, 0x40000), 0x40000u);
}

// --------------------------------------------------------------- tags, CQ data, cookies

TEST(OfiWire, TagsNameKindSenderChannelAndSlot) {
  const std::uint64_t t = ofi_tag(OfiMsgKind::credit, kOfiMaxRanks - 1, (1 << 20) - 1, 63);
  EXPECT_LT(t, 1ull << 48);
  const OfiTagFields f = decode_ofi_tag(t);
  EXPECT_EQ(f.kind, OfiMsgKind::credit);
  EXPECT_EQ(f.sender, kOfiMaxRanks - 1);
  EXPECT_EQ(f.channel_tag, (1 << 20) - 1);
  EXPECT_EQ(f.slot, 63u);
  EXPECT_NE(ofi_tag(OfiMsgKind::data, 1, 5, 0), ofi_tag(OfiMsgKind::data, 2, 5, 0));  // same tag, other sender
  EXPECT_NE(ofi_tag(OfiMsgKind::data, 1, 5, 0), ofi_tag(OfiMsgKind::credit, 1, 5, 0));
  expect_error([] { ofi_tag(OfiMsgKind::data, kOfiMaxRanks, 0, 0); }, ExitCode::runtime, {"do not fit a tag"});
  expect_error([] { ofi_tag(OfiMsgKind::data, 0, 0, 64); }, ExitCode::runtime, {"slot 64"});
}

TEST(OfiWire, CqDataCarriesChannelSlotAndLengthWhereItFits) {
  const std::uint64_t d8 = ofi_cq_data(kOfiMaxChannels - 1, 5, true, 262144);
  OfiCqDataFields f = decode_ofi_cq_data(d8, true, 0);  // tcp;ofi_rxm reports len 0: the data says it
  EXPECT_EQ(f.channel, kOfiMaxChannels - 1);
  EXPECT_EQ(f.slot, 5u);
  EXPECT_EQ(f.bytes, 262144u);
  const std::uint64_t d4 = ofi_cq_data(7, 3, false, 1000);
  EXPECT_LT(d4, 1ull << 32);  // fits efa's and verbs' 4 bytes
  f = decode_ofi_cq_data(d4, false, 1000);
  EXPECT_EQ(f.channel, 7u);
  EXPECT_EQ(f.slot, 3u);
  EXPECT_EQ(f.bytes, 1000u);
  expect_error([] { ofi_cq_data(kOfiMaxChannels, 0, false, 0); }, ExitCode::runtime, {"do not fit remote CQ data"});
  expect_error([] { ofi_cq_data(0, 0, true, 1ull << 32); }, ExitCode::runtime, {"4294967296 bytes"});
}

TEST(OfiWire, CookiesAndWrappingPostNumbers) {
  const std::uint64_t c = ofi_cookie(0xfffffffe, OfiOp::credit_recv, (1ull << 28) + 9);
  const OfiCookieFields f = decode_ofi_cookie(c);
  EXPECT_EQ(f.channel, 0xfffffffeu);
  EXPECT_EQ(f.op, OfiOp::credit_recv);
  EXPECT_EQ(f.seq, 9u);
  EXPECT_EQ(ofi_unwrap_seq(9, (1ull << 28) + 5), (1ull << 28) + 9);
  EXPECT_EQ(ofi_unwrap_seq(2, (1ull << 28) - 3), (1ull << 28) + 2);  // across the wrap
  EXPECT_EQ(ofi_unwrap_seq(7, 7), 7u);
  EXPECT_EQ(name(OfiOp::data_send, OfiProtocol::rma), "fi_writedata (data)");
  EXPECT_EQ(name(OfiOp::data_send, OfiProtocol::tagged), "fi_tsend (data)");
  EXPECT_EQ(name(OfiOp::credit_recv, OfiProtocol::rma), "fi_trecv (credit)");
}

// A receiver learns the slot, not the message number: the ring maps it back within its window.
TEST(OfiWire, SlotsMapToTheMessageTheyMayHold) {
  ArrivalRing r("ofi", 4);
  EXPECT_EQ(r.seq_of_slot(2), 2u);
  r.on_arrival(r.seq_of_slot(1), 10, "rank 1");  // out of order: slot 1 before slot 0
  r.on_arrival(r.seq_of_slot(0), 20, "rank 1");
  EXPECT_EQ(*r.peek(), 20u);
  r.release();
  EXPECT_EQ(r.seq_of_slot(0), 4u);  // slot 0 now takes message 4
  EXPECT_EQ(r.seq_of_slot(1), 1u);
  r.release();
  EXPECT_EQ(r.seq_of_slot(1), 5u);
  expect_error([&] { r.on_arrival(5, 1, "rank 1"); r.on_arrival(5, 1, "rank 1"); }, ExitCode::runtime,
               {"ofi: rank 1 wrote message 5"});
}

// -------------------------------------------------------------------- connection data

TEST(OfiConn, RoundTripAndRefusals) {
  OfiConnData d;
  d.protocol = OfiProtocol::rma;
  d.rank = 3;
  d.tag = 77;
  d.channel = 12;
  d.slots = 4;
  d.key = 0xdeadbeefcafe;
  d.base = 0x7f0012340000;
  d.bytes = 4 * 262144;
  const OfiConnBlob b = encode_ofi_conn(d);
  EXPECT_EQ(decode_ofi_conn(b.data(), b.size(), 3, OfiProtocol::rma), d);
  expect_error([&] { decode_ofi_conn(b.data(), 10, 3, OfiProtocol::rma); }, ExitCode::runtime,
               {"from rank 3 is 10 bytes, expected 64"});
  expect_error([&] { decode_ofi_conn(b.data(), b.size(), 2, OfiProtocol::rma); }, ExitCode::runtime,
               {"received from rank 2 describes rank 3"});
  expect_error([&] { decode_ofi_conn(b.data(), b.size(), 3, OfiProtocol::tagged); }, ExitCode::precondition,
               {"rank 3 carries the channel with tag 77 as rma and this rank as tagged"});
  OfiConnBlob bad = b;
  bad[0] ^= 1;
  expect_error([&] { decode_ofi_conn(bad.data(), bad.size(), 3, OfiProtocol::rma); }, ExitCode::runtime, {"magic"});
  bad = b;
  bad[4] = 9;
  expect_error([&] { decode_ofi_conn(bad.data(), bad.size(), 3, OfiProtocol::rma); }, ExitCode::runtime,
               {"version 9"});
  d.bytes = 1001;  // not whole slots
  const OfiConnBlob partial = encode_ofi_conn(d);
  expect_error([&] { decode_ofi_conn(partial.data(), partial.size(), 3, OfiProtocol::rma); }, ExitCode::runtime,
               {"1001 bytes in 4 slots"});
}

TEST(OfiConn, AddressBlocks) {
  const std::vector<std::uint8_t> a = {1, 2, 3, 0, 5};
  EXPECT_EQ(decode_ofi_address(encode_ofi_address(a), 0), a);
  expect_error([] { encode_ofi_address({}); }, ExitCode::runtime, {"address of 0 bytes"});
  expect_error([] { encode_ofi_address(std::vector<std::uint8_t>(kOfiAddrBytes)); }, ExitCode::runtime,
               {"address of 256 bytes"});
  expect_error([] { decode_ofi_address(OfiAddrBlock{}, 4); }, ExitCode::runtime, {"rank 4 sent an endpoint address"});
}

// ------------------------------------------------------------------ labels and failures

TEST(OfiFailures, LabelsAndCompletionErrors) {
  EXPECT_EQ(ofi_label("tcp;ofi_rxm", OfiProtocol::rma), "ofi:tcp;ofi_rxm:rma");
  EXPECT_EQ(ofi_label("shm", OfiProtocol::tagged), "ofi:shm:tagged");
  for (int err : {ECONNRESET, ECONNREFUSED, ENOTCONN, EHOSTUNREACH, ETIMEDOUT})
    EXPECT_EQ(classify_ofi_error(err).meaning, "the peer's process or host is gone, or the link dropped") << err;
  EXPECT_EQ(classify_ofi_error(kOfiErrTruncated).meaning, "message longer than the posted buffer");
  EXPECT_EQ(classify_ofi_error(EACCES).meaning, "remote key or registration rejected (rkey/MR mismatch)");
  EXPECT_EQ(classify_ofi_error(EIO).code, ExitCode::runtime);
  EXPECT_EQ(ofi_completion_message("tcp;ofi_rxm", "fi_writedata (data)", "rank 1 (host b)", ECONNRESET,
                                   "Connection reset by peer", "tcp: peer closed"),
            "ofi (tcp;ofi_rxm): fi_writedata (data) to rank 1 (host b) failed: Connection reset by peer (provider: "
            "tcp: peer closed): the peer's process or host is gone, or the link dropped");
}

}  // namespace
}  // namespace ccbench
