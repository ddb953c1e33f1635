// The credit channel shared by ib and ofi (transports/net/credit_channel.h) over an in-process
// fabric: a write is a memcpy into the receiver's slot whose arrival, completion and credit
// reach the ends only when they poll, so the tests see the template's own logic: slot order and
// data, the two conditions for reusing a slot (a credit and the write's completion), drain
// (notices included), the zero-copy ends and the wording of caller bugs.
#include <array>
#include <cstring>
#include <deque>
#include <numeric>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "tests/unit/expect_error.h"
#include "transports/net/credit_channel.h"
#include "topologies/layout.h"

namespace ccbench {
namespace {

struct LoopEnd : CreditEnd {
  LoopEnd(const SetupArgs& a, bool) : CreditEnd(Transport::ib, a, false) {}
};

class LoopSend;

class LoopRecv final : public CreditRecvChannel<LoopRecv, LoopEnd> {
 public:
  explicit LoopRecv(const SetupArgs& a) : CreditRecvChannel(a, true) {}
  void progress() {
    ++polls;
    for (; !landed.empty(); landed.pop_front()) arrived(landed.front().first, landed.front().second);
  }
  void return_credit(std::uint32_t k) {
    freed.push_back(k);
    credits_out.push_back(ring_.released());
  }
  char* slot_at(std::uint32_t k) const { return slot(k); }

  std::deque<std::pair<std::uint64_t, std::uint64_t> > landed;  // (seq, bytes) not yet polled
  std::vector<std::uint32_t> freed;                             // return_credit's slots, in order
  std::deque<std::uint64_t> credits_out;                        // released counts on their way
  int polls = 0;
};

class LoopSend final : public CreditSendChannel<LoopSend, LoopEnd> {
 public:
  LoopSend(const SetupArgs& a, LoopRecv& peer, bool any_memory)
      : CreditSendChannel(a), peer_end_(peer), any_memory_(any_memory) {}
  void progress() {
    ++polls;
    if (!hold_completions)
      for (; !completions.empty(); completions.pop_front()) written(completions.front());
    for (; !peer_end_.credits_out.empty(); peer_end_.credits_out.pop_front())
      credited_up_to(peer_end_.credits_out.front());
    if (!hold_notices) queued_notices = 0;
  }
  void write_slot(std::uint64_t seq, std::uint32_t k, const char* from, std::size_t bytes, bool registered) {
    std::memcpy(peer_end_.slot_at(k), from, bytes);
    peer_end_.landed.emplace_back(seq, bytes);
    completions.push_back(seq);
    writes.push_back({seq, k, bytes, registered});
  }
  bool sends_any_memory() const { return any_memory_; }
  bool flushed() const { return queued_notices == 0; }
  void credit(std::uint32_t n) { credited(n); }

  struct Write {
    std::uint64_t seq;
    std::uint32_t slot;
    std::size_t bytes;
    bool registered;
  };
  std::vector<Write> writes;
  std::deque<std::uint64_t> completions;
  bool hold_completions = false;
  int queued_notices = 0;  // notices the fabric has not taken yet (ofi's after-write notices)
  bool hold_notices = false;
  int polls = 0;

 private:
  LoopRecv& peer_end_;
  bool any_memory_;
};

constexpr std::size_t kLoopSlotBytes = 256;
constexpr int kLoopDepth = 3;

struct CreditLoop {
  explicit CreditLoop(bool zero_copy = false, bool any_memory = false) {
    layout.nranks = 2;
    layout.host_of = {"h0", "h1"};
    options.slot_bytes = kLoopSlotBytes;
    options.depth = kLoopDepth;
    SetupArgs a;
    a.layout = &layout;
    a.options = &options;
    a.peer = 1;
    if (zero_copy) a.slots = recv_slots.data();
    recv = std::make_unique<LoopRecv>(a);
    if (zero_copy) a.slots = send_slots.data();
    send = std::make_unique<LoopSend>(a, *recv, any_memory);
  }
  RankLayout layout;
  ChannelOptions options;
  std::array<char, kLoopSlotBytes * kLoopDepth> recv_slots{}, send_slots{};
  std::unique_ptr<LoopRecv> recv;
  std::unique_ptr<LoopSend> send;
};

TEST(CreditChannel, SlotsCarryTheBytesInOrderAndCreditsFreeThem) {
  CreditLoop l;
  std::vector<void*> acquired;
  for (int m = 0; m < 3 * kLoopDepth; ++m) {
    if (m >= kLoopDepth) {  // the window is full until the receiver releases the oldest message
      ASSERT_EQ(l.send->try_acquire(), nullptr);
      std::size_t bytes = 0;
      const auto* got = static_cast<const unsigned char*>(l.recv->try_peek(&bytes));
      ASSERT_NE(got, nullptr);
      EXPECT_EQ(bytes, static_cast<std::size_t>(m - kLoopDepth + 1));
      for (std::size_t i = 0; i < bytes; ++i) EXPECT_EQ(got[i], static_cast<unsigned char>(m - kLoopDepth)) << i;
      l.recv->release();
    }
    void* s = l.send->try_acquire();
    ASSERT_NE(s, nullptr) << m;
    EXPECT_EQ(s, l.send->try_acquire());  // the same slot until posted
    acquired.push_back(s);
    std::memset(s, m, static_cast<std::size_t>(m + 1));
    l.send->post(static_cast<std::size_t>(m + 1));
  }
  for (int m = 0; m < 3 * kLoopDepth; ++m) {
    EXPECT_EQ(acquired[static_cast<std::size_t>(m)], acquired[static_cast<std::size_t>(m % kLoopDepth)]);
    EXPECT_EQ(l.send->writes[static_cast<std::size_t>(m)].seq, static_cast<std::uint64_t>(m));
    EXPECT_EQ(l.send->writes[static_cast<std::size_t>(m)].slot, static_cast<std::uint32_t>(m % kLoopDepth));
    EXPECT_TRUE(l.send->writes[static_cast<std::size_t>(m)].registered);
  }
  EXPECT_EQ(l.recv->freed, (std::vector<std::uint32_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(l.send->direct(), nullptr);  // own slots, no send from other memory
  EXPECT_EQ(l.recv->direct(), nullptr);
}

TEST(CreditChannel, ASlotIsReusedOnlyOnceItsWriteHasCompleted) {
  CreditLoop l;
  l.send->hold_completions = true;
  for (int m = 0; m < kLoopDepth; ++m) {
    ASSERT_NE(l.send->try_acquire(), nullptr);
    l.send->post(8);
  }
  std::size_t bytes = 0;
  ASSERT_NE(l.recv->try_peek(&bytes), nullptr);
  l.recv->release();  // a credit, before the completion of the write it answers
  EXPECT_EQ(l.send->try_acquire(), nullptr);
  EXPECT_FALSE(l.send->try_drain());
  EXPECT_EQ(l.send->sent(), 0u);
  l.send->hold_completions = false;
  EXPECT_TRUE(l.send->try_drain());
  EXPECT_EQ(l.send->sent(), static_cast<std::uint64_t>(kLoopDepth));
  EXPECT_NE(l.send->try_acquire(), nullptr);
}

// A write that completes only as the receiver takes it (shm without CMA) has its notice posted
// after completion; a sender must not count as drained while that notice still waits for room.
TEST(CreditChannel, DrainWaitsForANoticeStillQueued) {
  CreditLoop l;
  ASSERT_NE(l.send->try_acquire(), nullptr);
  l.send->post(8);
  l.send->queued_notices = 1;
  l.send->hold_notices = true;
  EXPECT_FALSE(l.send->try_drain());
  EXPECT_FALSE(l.send->try_drain());
  EXPECT_EQ(l.send->sent(), 1u);  // the bytes have left; only the notice is missing
  l.send->hold_notices = false;
  EXPECT_TRUE(l.send->try_drain());
}

TEST(CreditChannel, PollsTheFabricOnlyWhenItMustWait) {
  CreditLoop l;
  const int before = l.send->polls;
  ASSERT_NE(l.send->try_acquire(), nullptr);  // a free slot: no poll
  EXPECT_EQ(l.send->polls, before);
  l.send->post(4);
  std::size_t bytes = 0;
  ASSERT_NE(l.recv->try_peek(&bytes), nullptr);  // not yet seen: one poll
  EXPECT_EQ(l.recv->polls, 1);
  ASSERT_NE(l.recv->try_peek(&bytes), nullptr);  // already seen: none
  EXPECT_EQ(l.recv->polls, 1);
  EXPECT_TRUE(l.send->try_drain());
  const int drained = l.send->polls;
  EXPECT_TRUE(l.send->try_drain());  // nothing outstanding: no poll
  EXPECT_EQ(l.send->polls, drained);
}

TEST(CreditChannel, CumulativeCreditsIgnoreOlderCounts) {
  CreditLoop l;
  for (int m = 0; m < kLoopDepth; ++m) {
    ASSERT_NE(l.send->try_acquire(), nullptr);
    l.send->post(1);
  }
  std::size_t bytes = 0;
  ASSERT_NE(l.recv->try_peek(&bytes), nullptr);
  l.recv->release();
  l.recv->credits_out.push_front(0);  // a stale count ahead of the newest
  ASSERT_NE(l.send->try_acquire(), nullptr);
  l.send->post(1);
  EXPECT_EQ(l.send->try_acquire(), nullptr);  // exactly one slot came back
  expect_error([&] { l.send->credit(5); }, ExitCode::runtime, {"ib: the receiver returned 5 credits"});
}

TEST(CreditChannel, ZeroCopyEndsUseTheCallersSlots) {
  CreditLoop l(true);
  ASSERT_NE(l.send->direct(), nullptr);
  ASSERT_NE(l.recv->direct(), nullptr);
  std::iota(l.send_slots.begin(), l.send_slots.begin() + 100, 0);
  ASSERT_TRUE(l.send->direct()->try_post_from(l.send_slots.data() + kLoopSlotBytes, 100));  // any offset in the slots
  EXPECT_TRUE(l.send->writes.back().registered);
  std::size_t bytes = 0;
  expect_error([&] { (void)l.recv->direct()->try_receive_into(l.recv_slots.data() + 8, kLoopSlotBytes, &bytes); },
               ExitCode::runtime, {"ib: zero-copy receive from rank 1 (host h1)", "but the peer writes slot"});
  ASSERT_TRUE(l.recv->direct()->try_receive_into(l.recv_slots.data(), kLoopSlotBytes, &bytes));
  EXPECT_EQ(bytes, 100u);
  EXPECT_EQ(l.recv_slots[99], l.send_slots[kLoopSlotBytes + 99]);
  EXPECT_FALSE(
      l.recv->direct()->try_receive_into(l.recv_slots.data() + kLoopSlotBytes, kLoopSlotBytes, &bytes));  // none yet
  l.recv->release();
  EXPECT_TRUE(l.send->try_drain());
  EXPECT_EQ(l.send->direct()->sent(), 1u);
  expect_error([&] { (void)l.recv->try_peek(&bytes); }, ExitCode::runtime,
               {"ib: the zero-copy channel from rank 1 (host h1) is read with try_receive_into"});
  std::array<char, 16> elsewhere{};
  expect_error([&] { (void)l.send->direct()->try_post_from(elsewhere.data(), elsewhere.size()); }, ExitCode::runtime,
               {"zero-copy send of 16 bytes", "outside the registered slots"});
  expect_error([&] { (void)l.send->direct()->try_post_from(l.send_slots.data(), kLoopSlotBytes + 1); },
               ExitCode::runtime, {"ib: zero-copy send of 257 bytes to rank 1 (host h1) into slots of 256"});
}

TEST(CreditChannel, SendsFromAnyMemoryWhereTheFabricDoes) {
  CreditLoop l(false, true);
  ASSERT_NE(l.send->direct(), nullptr);
  EXPECT_EQ(l.recv->direct(), nullptr);
  std::array<char, 32> buffer{};
  buffer.fill('x');
  ASSERT_TRUE(l.send->direct()->try_post_from(buffer.data(), buffer.size()));
  EXPECT_FALSE(l.send->writes.back().registered);
  std::size_t bytes = 0;
  const char* got = static_cast<const char*>(l.recv->try_peek(&bytes));
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(std::string(got, bytes), std::string(32, 'x'));
}

TEST(CreditChannel, CallerBugsAreNamed) {
  CreditLoop l;
  ASSERT_NE(l.send->try_acquire(), nullptr);
  expect_error([&] { l.send->post(kLoopSlotBytes + 1); }, ExitCode::runtime,
               {"ib: post of 257 bytes to rank 1 (host h1) into slots of 256"});
  expect_error([&] { l.recv->release(); }, ExitCode::runtime, {"ib: release of message 0, which has not arrived"});
  l.recv->landed.emplace_back(kLoopDepth, 1);  // message 3 into slot 0 before message 0 was released
  std::size_t bytes = 0;
  expect_error([&] { (void)l.recv->try_peek(&bytes); }, ExitCode::runtime,
               {"ib: rank 1 (host h1) wrote message 3 into slot 0", "without a credit"});
}

}  // namespace
}  // namespace ccbench
