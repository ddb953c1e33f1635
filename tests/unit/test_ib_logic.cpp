// The RDMA transport's logic without a device (transports/ib/ib_logic.h): options, port/GID
// choice, the connection-data blob, QP state order and its error paths, chunking and credits,
// completion-error classification, the zero-copy ends' slot mapping, post order and receive ring.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/error.h"
#include "tests/unit/expect_error.h"
#include "transports/ib/ib_logic.h"

namespace ccbench {
namespace {

TEST(IbOptions, DeviceAndPortParse) {
  IbOptions o;
  parse_ib_device("mlx5_0", &o);
  EXPECT_EQ(o.device, "mlx5_0");
  EXPECT_EQ(o.port, 0);
  parse_ib_device("mlx5_1:2", &o);
  EXPECT_EQ(o.device, "mlx5_1");
  EXPECT_EQ(o.port, 2);
  expect_error([&] { parse_ib_device(":1", &o); }, ExitCode::usage, {"--ib-dev", "NAME:PORT"});
  expect_error([&] { parse_ib_device("mlx5_0:", &o); }, ExitCode::usage, {"--ib-dev", "1 to 255"});
  expect_error([&] { parse_ib_device("mlx5_0:0", &o); }, ExitCode::usage, {"port '0'"});
  expect_error([&] { parse_ib_device("mlx5_0:1x", &o); }, ExitCode::usage, {"port '1x'"});
}

TEST(IbOptions, ValidationNamesTheFlag) {
  EXPECT_NO_THROW(validate_ib_options(IbOptions{}));
  auto bad = [](auto change, const char* flag) {
    IbOptions o;
    change(o);
    expect_error([&] { validate_ib_options(o); }, ExitCode::usage, {flag});
  };
  bad([](IbOptions& o) { o.qps_per_peer = 0; }, "--ib-qps");
  bad([](IbOptions& o) { o.qps_per_peer = kMaxQpsPerPeer + 1; }, "--ib-qps");
  bad([](IbOptions& o) { o.chunk_bytes = 1024; }, "--ib-chunk");
  bad([](IbOptions& o) { o.chunk_bytes = 4096 + 32; }, "--ib-chunk");
  bad([](IbOptions& o) { o.mtu = 1500; }, "--ib-mtu");
  bad([](IbOptions& o) { o.traffic_class = 256; }, "--ib-tc");
  bad([](IbOptions& o) { o.service_level = 16; }, "--ib-sl");
  bad([](IbOptions& o) { o.gid_index = -2; }, "--gid-index");
  EXPECT_EQ(mtu_enum_from_bytes(4096), 5);
  EXPECT_EQ(mtu_enum_from_bytes(256), 1);
  EXPECT_EQ(mtu_bytes_from_enum(3), 1024);
  EXPECT_EQ(mtu_bytes_from_enum(6), 0);
}

IbPortInfo roce_port(const char* dev, int port, bool active) {
  IbPortInfo p;
  p.device = dev;
  p.port = port;
  p.active = active;
  p.state = active ? "PORT_ACTIVE" : "PORT_DOWN";
  p.link_layer = LinkLayer::ethernet;
  IbGid link_local{0, GidType::roce_v1, {0xfe, 0x80}};
  IbGid v2_ipv6{1, GidType::roce_v2, {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1}};
  IbGid v2_ipv4{3, GidType::roce_v2, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 7}};
  IbGid empty{2, GidType::roce_v2, {}};
  p.gids = {link_local, v2_ipv6, empty, v2_ipv4};
  return p;
}

TEST(IbPorts, ChoosesActivePortAndRoceV2Ipv4Gid) {
  std::vector<IbPortInfo> ports = {roce_port("mlx5_0", 1, false), roce_port("mlx5_1", 1, true)};
  IbPortChoice c = choose_port(ports, IbOptions{});
  EXPECT_EQ(c.port.device, "mlx5_1");
  EXPECT_EQ(c.gid_index, 3);  // the IPv4-mapped RoCE v2 entry, not the first one
  IbOptions o;
  o.gid_index = 1;
  EXPECT_EQ(choose_port(ports, o).gid_index, 1);
  o.gid_index = 2;
  expect_error([&] { choose_port(ports, o); }, ExitCode::usage, {"--gid-index", "empty", "0, 1, 3"});
  o.gid_index = 9;
  expect_error([&] { choose_port(ports, o); }, ExitCode::usage, {"past the GID table"});
}

TEST(IbPorts, InfinibandUsesGidZeroAndNamesPortsWhenNoneFits) {
  IbPortInfo ib;
  ib.device = "mlx5_2";
  ib.port = 1;
  ib.active = true;
  ib.state = "PORT_ACTIVE";
  ib.gids = {IbGid{0, GidType::ib, {0xfe, 0x80}}};
  std::vector<IbPortInfo> ports = {roce_port("mlx5_0", 1, false), ib};
  IbOptions o;
  parse_ib_device("mlx5_2:1", &o);
  EXPECT_EQ(choose_port(ports, o).gid_index, 0);
  parse_ib_device("mlx5_0", &o);
  expect_error([&] { choose_port(ports, o); }, ExitCode::precondition,
               {"no active RDMA port matches mlx5_0", "mlx5_0:1 (PORT_DOWN, Ethernet/RoCE)", "mlx5_2:1 (PORT_ACTIVE, InfiniBand)"});
  expect_error([&] { choose_port({}, IbOptions{}); }, ExitCode::precondition, {"ports here: none"});
}

TEST(IbPorts, MissingDeviceReason) {
  const auto dir = std::filesystem::temp_directory_path() / "ccbench_test_ib_sysfs";
  std::filesystem::remove_all(dir);
  auto r = missing_rdma_reason(dir.string());
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("no RDMA device: " + dir.string() + " does not exist"), std::string::npos) << *r;
  std::filesystem::create_directories(dir);
  r = missing_rdma_reason(dir.string());
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("is empty"), std::string::npos) << *r;
  std::filesystem::create_directories(dir / "mlx5_0");
  EXPECT_FALSE(missing_rdma_reason(dir.string()));
  std::filesystem::remove_all(dir);
}

IbConnData sample_conn() {
  IbConnData d;
  d.rank = 3;
  d.qpn = {0x1a2, 0xffffff};
  d.psn = {0x123456, 0};
  d.lid = 17;
  d.mtu = 5;
  d.link_layer = LinkLayer::ethernet;
  d.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 7};
  d.rkey = 0xdeadbeef;
  d.addr = 0x7f0011223344ull;
  d.bytes = 4 * 262144;
  d.slots = 4;
  return d;
}

TEST(IbConnBlob, RoundTrips) {
  const IbConnData d = sample_conn();
  const ConnBlob b = encode_conn(d);
  EXPECT_EQ(b.size(), kConnBlobBytes);
  EXPECT_EQ(b[0], 0x63);  // little-endian magic "ccb1"
  EXPECT_EQ(decode_conn(b.data(), b.size(), 3), d);
}

TEST(IbConnBlob, RejectsTruncationVersionAndBadValues) {
  ConnBlob b = encode_conn(sample_conn());
  expect_error([&] { decode_conn(b.data(), b.size() - 1, 3); }, ExitCode::runtime, {"rank 3", "255 bytes", "256"});
  ConnBlob v = b;
  v[4] = 2;  // version 2
  expect_error([&] { decode_conn(v.data(), v.size(), 3); }, ExitCode::runtime, {"version 2", "version 1"});
  ConnBlob m = b;
  m[0] ^= 0xff;
  expect_error([&] { decode_conn(m.data(), m.size(), 3); }, ExitCode::runtime, {"magic"});
  ConnBlob n = b;
  n[6] = 0;  // zero QPs
  expect_error([&] { decode_conn(n.data(), n.size(), 3); }, ExitCode::runtime, {"lists 0 QPs"});
  ConnBlob q = b;
  q[8] = q[9] = q[10] = q[11] = 0;  // QP 0 number 0
  expect_error([&] { decode_conn(q.data(), q.size(), 3); }, ExitCode::runtime, {"QP 0 has number 0"});
  ConnBlob mtu = b;
  mtu[8 + kMaxQpsPerPeer * 8 + 2] = 7;
  expect_error([&] { decode_conn(mtu.data(), mtu.size(), 3); }, ExitCode::runtime, {"MTU enum 7"});
  expect_error([&] { decode_conn(b.data(), b.size(), 2); }, ExitCode::runtime, {"received from rank 2 describes rank 3"});
  IbConnData wide = sample_conn();
  wide.qpn[0] = 0x1000000;
  expect_error([&] { encode_conn(wide); }, ExitCode::runtime, {"24 bits"});
  IbConnData none = sample_conn();
  none.qpn.clear();
  none.psn.clear();
  expect_error([&] { encode_conn(none); }, ExitCode::runtime, {"0 QPs"});
}

// A QP that records the steps it is asked for and fails the one named.
class ScriptedQp final : public QpDriver {
 public:
  explicit ScriptedQp(QpState fail_at = QpState::error, int err = EINVAL) : fail_at_(fail_at), err_(err) {}
  QpState state() const override { return state_; }
  int modify(QpState to) override {
    steps.push_back(to);
    if (to == fail_at_) return err_;
    if (!lie_) state_ = to;
    return 0;
  }
  std::vector<QpState> steps;
  QpState state_ = QpState::reset;
  bool lie_ = false;

 private:
  QpState fail_at_;
  int err_;
};

TEST(IbQpStates, BringUpGoesResetInitRtrRts) {
  ScriptedQp qp;
  bring_up(qp, "0x1a2", "rank 1 (host b)");
  EXPECT_EQ(qp.steps, (std::vector<QpState>{QpState::init, QpState::rtr, QpState::rts}));
  EXPECT_EQ(qp.state(), QpState::rts);
  EXPECT_EQ(next_qp_state(QpState::reset), QpState::init);
  expect_error([] { next_qp_state(QpState::rts); }, ExitCode::runtime, {"RTS has no next state"});
  expect_error([] { next_qp_state(QpState::error); }, ExitCode::runtime, {"ERROR"});
}

TEST(IbQpStates, EveryFailingStepIsNamed) {
  const struct {
    QpState at;
    const char* step;
    const char* hint;
  } cases[] = {{QpState::init, "RESET->INIT", "port number"},
               {QpState::rtr, "INIT->RTR", "--gid-index"},
               {QpState::rts, "RTR->RTS", "timeout/retry"}};
  for (const auto& c : cases) {
    ScriptedQp qp(c.at);
    expect_error([&] { bring_up(qp, "0x1a2", "rank 1 (host b)"); }, ExitCode::runtime,
                 {"QP 0x1a2 to rank 1 (host b)", c.step, "Invalid argument", c.hint});
    EXPECT_EQ(qp.steps.back(), c.at);  // nothing was tried after the failed step
  }
}

TEST(IbQpStates, RefusesAQpNotInResetAndASilentFailure) {
  ScriptedQp used;
  used.state_ = QpState::rtr;
  expect_error([&] { bring_up(used, "0x5", "rank 2 (host c)"); }, ExitCode::runtime, {"state RTR, not RESET"});
  EXPECT_TRUE(used.steps.empty());
  ScriptedQp liar;
  liar.lie_ = true;
  expect_error([&] { bring_up(liar, "0x5", "rank 2 (host c)"); }, ExitCode::runtime,
               {"RESET->INIT reported success but the QP is in RESET"});
}

TEST(IbChunks, SlotsAreCutIntoChunksEndingWithImmediate) {
  auto c = plan_chunks(10000, 4096);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].offset, 0u);
  EXPECT_EQ(c[1].offset, 4096u);
  EXPECT_EQ(c[2].offset, 8192u);
  EXPECT_EQ(c[2].bytes, 10000u - 8192u);
  EXPECT_FALSE(c[0].last);
  EXPECT_TRUE(c[2].last);
  auto exact = plan_chunks(8192, 4096);
  ASSERT_EQ(exact.size(), 2u);
  EXPECT_EQ(exact[1].bytes, 4096u);
  auto empty = plan_chunks(0, 4096);
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0].bytes, 0u);
  EXPECT_TRUE(empty[0].last);
  expect_error([] { plan_chunks(10, 0); }, ExitCode::usage, {"0 bytes"});
  EXPECT_EQ(max_chunks(1 << 20, 1 << 18), 4u);
  EXPECT_EQ(max_chunks((1 << 20) + 1, 1 << 18), 5u);
  EXPECT_EQ(qp_of_slot(5, 4), 1);
  EXPECT_EQ(qp_of_slot(5, 1), 0);
}

TEST(IbChunks, ImmediatesSeparateLengthsFromCredits) {
  EXPECT_EQ(decode_imm(data_imm(262144)).value, 262144u);
  EXPECT_FALSE(decode_imm(data_imm(0)).credit);
  EXPECT_TRUE(decode_imm(credit_imm(3)).credit);
  EXPECT_EQ(decode_imm(credit_imm(3)).value, 3u);
  expect_error([] { data_imm(1ull << 31); }, ExitCode::runtime, {"immediate"});
}

TEST(IbCredits, WindowLimitsSlotsInFlight) {
  CreditWindow w("ib", 2);
  EXPECT_TRUE(w.can_post());
  EXPECT_EQ(w.slot_to_fill(), 0u);
  w.on_post();
  EXPECT_EQ(w.slot_to_fill(), 1u);
  w.on_post();
  EXPECT_FALSE(w.can_post());
  EXPECT_EQ(w.in_flight(), 2u);
  expect_error([&] { w.on_post(); }, ExitCode::runtime, {"all 2 slots in flight"});
  w.on_credit(1);
  EXPECT_TRUE(w.can_post());
  EXPECT_EQ(w.slot_to_fill(), 0u);  // slots are reused in order
  expect_error([&] { w.on_credit(2); }, ExitCode::runtime, {"returned 2 credits with only 1"});
  w.on_credit(1);
  EXPECT_EQ(w.credited(), 2u);
  expect_error([] { CreditWindow none("ib", 0); }, ExitCode::usage, {"at least one slot"});
}

// Zero-copy ends (the GPU net proxy over ib): the caller's slots, post order, the receiver's ring.
TEST(IbZeroCopy, CallerSlotsMapToOffsetsAndRefuseForeignMemory) {
  const SlotRegion r{0x10000, 512 * 1024, 4};  // the net FIFO's geometry: 4 slots of 512 KiB
  EXPECT_EQ(r.bytes(), 2u * 1024 * 1024);
  EXPECT_EQ(r.slot_offset(3), 3u * 512 * 1024);
  // A step's bytes at the start of slot 2 go from offset 2 x 512 KiB, whatever their count.
  EXPECT_EQ(r.offset_of(0x10000 + 2 * 512 * 1024, 1), 2u * 512 * 1024);
  EXPECT_EQ(r.offset_of(0x10000 + 3 * 512 * 1024, 512 * 1024), 3u * 512 * 1024);  // the last byte of the region
  EXPECT_EQ(r.offset_of(0x10000 + r.bytes(), 0), r.bytes());                       // an empty step at the end
  expect_error([&] { r.offset_of(0x10000 + 3 * 512 * 1024, 512 * 1024 + 1); }, ExitCode::runtime,
               {"zero-copy send of 524289 bytes", "outside the registered slots [0x10000, 0x210000)"});
  expect_error([&] { r.offset_of(0xff00, 16); }, ExitCode::runtime, {"at 0xff00"});
  expect_error([&] { r.offset_of(UINT64_MAX - 4, 16); }, ExitCode::runtime, {"outside"});  // no wrap-around
}

TEST(IbZeroCopy, WorkRequestIdsCarryKindAndPostNumber) {
  for (std::uint64_t seq : {0ull, 1ull, 4097ull, (1ull << 59) + 3}) {
    const std::uint64_t id = wr_id(WrKind::data, seq);
    EXPECT_EQ(wr_kind(id), WrKind::data);
    EXPECT_EQ(wr_seq(id), seq);
  }
  EXPECT_EQ(wr_kind(wr_id(WrKind::credit)), WrKind::credit);
  EXPECT_EQ(wr_kind(wr_id(WrKind::recv)), WrKind::recv);
  EXPECT_EQ(name(WrKind::data), "RDMA_WRITE (data)");
  EXPECT_EQ(name(WrKind::credit), "SEND_WITH_IMM (credit)");
  EXPECT_EQ(name(static_cast<WrKind>(9)), "work request");
}

TEST(IbZeroCopy, SlotsComeBackOnlyInPostOrder) {
  InOrderCompletions c("ib", 4);
  for (int i = 0; i < 4; ++i) c.on_post();
  expect_error([&] { c.on_post(); }, ExitCode::runtime, {"all 4 slots' writes outstanding"});
  // Two QPs: posts 1 and 3 (QP 1) complete before 0 and 2 (QP 0); slot 1 is not free until 0 is.
  c.on_complete(1);
  c.on_complete(3);
  EXPECT_EQ(c.done(), 0u);
  c.on_complete(0);
  EXPECT_EQ(c.done(), 2u);
  EXPECT_EQ(c.outstanding(), 2u);
  c.on_post();  // post 4 reuses slot 0
  expect_error([&] { c.on_complete(1); }, ExitCode::runtime, {"completion of post 1, which is not outstanding"});
  expect_error([&] { c.on_complete(3); }, ExitCode::runtime, {"post 3"});  // completed already
  expect_error([&] { c.on_complete(5); }, ExitCode::runtime, {"post 5"});  // never posted
  c.on_complete(2);
  EXPECT_EQ(c.done(), 4u);
  c.on_complete(4);
  EXPECT_EQ(c.done(), 5u);
  EXPECT_EQ(c.outstanding(), 0u);
  expect_error([] { InOrderCompletions none("ib", 0); }, ExitCode::usage, {"at least one slot"});
}

// The GPU proxy takes up to `depth` messages ahead (each into the GPU slot it names) and releases
// them as the GPU frees slots; each release is the credit that lets the sender write that slot.
TEST(IbZeroCopy, ReceiveRingTakesAheadAndCreditsOnRelease) {
  ArrivalRing r("ib", 4);
  EXPECT_FALSE(r.take());
  EXPECT_FALSE(r.peek());
  r.on_arrival(1, 100, "rank 1");  // QP 1 delivered message 1 before QP 0 delivered message 0
  EXPECT_FALSE(r.take());          // messages are taken in order
  r.on_arrival(0, 0, "rank 1");    // an empty step still arrives
  auto t = r.take();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->slot, 0u);
  EXPECT_EQ(t->bytes, 0u);
  t = r.take();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->slot, 1u);
  EXPECT_EQ(t->bytes, 100u);
  r.on_arrival(2, 7, "rank 1");
  r.on_arrival(3, 8, "rank 1");
  EXPECT_EQ(r.take()->slot, 2u);
  EXPECT_EQ(r.take()->slot, 3u);
  EXPECT_EQ(r.taken(), 4u);
  // Every slot held: the sender has no credit, and a write now is a protocol violation.
  expect_error([&] { r.on_arrival(4, 1, "rank 1 (host b)"); }, ExitCode::runtime,
               {"rank 1 (host b) wrote message 4 into slot 0", "messages 0 to 3", "without a credit"});
  EXPECT_EQ(*r.peek(), 0u);
  r.release();  // the GPU freed slot 0: one credit
  EXPECT_EQ(r.released(), 1u);
  EXPECT_FALSE(r.take());
  r.on_arrival(4, 9, "rank 1");
  t = r.take();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->slot, 0u);
  EXPECT_EQ(t->bytes, 9u);
  expect_error([&] { r.on_arrival(4, 9, "rank 1"); }, ExitCode::runtime, {"or twice"});
  for (int i = 0; i < 4; ++i) r.release();
  expect_error([&] { r.release(); }, ExitCode::runtime, {"release of message 5, which has not arrived"});
  expect_error([] { ArrivalRing none("ib", 0); }, ExitCode::usage, {"at least one slot"});
}

// Slot reads (CPU channels): peek shows the oldest unreleased message; release moves on.
TEST(IbZeroCopy, ReceiveRingPeeksInOrderForSlotReads) {
  ArrivalRing r("ib", 2);
  r.on_arrival(0, 5, "rank 0");
  EXPECT_EQ(*r.peek(), 5u);
  EXPECT_EQ(*r.peek(), 5u);  // again, until released
  r.release();
  EXPECT_FALSE(r.peek());
  r.on_arrival(1, 6, "rank 0");
  r.on_arrival(2, 7, "rank 0");
  EXPECT_EQ(*r.peek(), 6u);
  r.release();
  EXPECT_EQ(*r.peek(), 7u);
}

TEST(IbCompletions, ClassifiedWithPeerAndOpcode) {
  EXPECT_EQ(classify_completion(WcStatus::success).code, ExitCode::ok);
  EXPECT_EQ(classify_completion(WcStatus::retry_exc_err).meaning, "peer unreachable or link down");
  EXPECT_EQ(classify_completion(WcStatus::rem_access_err).meaning, "rkey/MR mismatch");
  EXPECT_EQ(classify_completion(WcStatus::rnr_retry_exc_err).code, ExitCode::runtime);
  for (int s = 1; s <= static_cast<int>(WcStatus::general_err); ++s)
    EXPECT_EQ(classify_completion(static_cast<WcStatus>(s)).code, ExitCode::runtime) << s;
  const std::string m = completion_error_message(WcStatus::retry_exc_err, "transport retry counter exceeded",
                                                 "RDMA_WRITE", "rank 1 (host b)", 0x1a2, 0x81);
  EXPECT_EQ(m, "ib: RDMA_WRITE to rank 1 (host b) on QP 0x1a2 failed: transport retry counter exceeded (status 12, "
               "vendor error 0x81): peer unreachable or link down");
}

}  // namespace
}  // namespace ccbench
