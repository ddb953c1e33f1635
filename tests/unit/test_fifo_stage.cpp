// The host transport's copy-engine staging without a GPU: the choice knobs (core/knobs.h,
// transports/gpu/host_copy.h) and the proxy's per-FIFO state machine (transports/gpu/fifo_stage.h) run
// on host memory with a copier whose copies land only when the test completes them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/knobs.h"
#include "transports/gpu/fifo_stage.h"
#include "transports/gpu/host_copy.h"
#include "transports/gpu/host_flags.h"
#include "usage_error.h"

namespace ccbench {
namespace {

constexpr std::size_t kSlotBytes = 256;
constexpr int kSlots = gpu::kFifoSlots;

TEST(KnobChoice, AcceptsTheValidWordsOnly) {
  const std::vector<std::string_view> words{"sm", "ce"};
  EXPECT_EQ(knob_choice("CCBENCH_GPU_HOST_RECV", "sm", words), 0u);
  EXPECT_EQ(knob_choice("CCBENCH_GPU_HOST_RECV", "ce", words), 1u);
  for (const char* bad : {"CE", "ce ", "copy", "1"}) {
    const std::string m = usage_error([&] { knob_choice("CCBENCH_GPU_HOST_RECV", bad, words); });
    EXPECT_EQ(m, std::string("CCBENCH_GPU_HOST_RECV='") + bad + "' is invalid: give one of sm, ce");
  }
}

// Sets one variable for the scope of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(HostCopyModes, DefaultsToSmAndReadsBothHalves) {
  EXPECT_EQ(host_copy_modes(), HostCopyModes{});
  EXPECT_FALSE(host_copy_modes().any_ce());
  {
    ScopedEnv recv("CCBENCH_GPU_HOST_RECV", "ce");
    EXPECT_EQ(host_copy_modes(), (HostCopyModes{HostCopy::ce, HostCopy::sm}));
    ScopedEnv send("CCBENCH_GPU_HOST_SEND", "ce");
    EXPECT_EQ(host_copy_modes(), (HostCopyModes{HostCopy::ce, HostCopy::ce}));
  }
  ScopedEnv send("CCBENCH_GPU_HOST_SEND", "ce");
  EXPECT_EQ(host_copy_modes(), (HostCopyModes{HostCopy::sm, HostCopy::ce}));
  ScopedEnv empty("CCBENCH_GPU_HOST_RECV", "");  // empty means the default
  EXPECT_EQ(host_copy_modes().recv, HostCopy::sm);
}

TEST(HostCopyModes, BadValueIsAUsageErrorNamingIt) {
  ScopedEnv send("CCBENCH_GPU_HOST_SEND", "dma");
  EXPECT_EQ(usage_error([] { host_copy_modes(); }), "CCBENCH_GPU_HOST_SEND='dma' is invalid: give one of sm, ce");
}

TEST(HostCopyModes, ForcedOnlyWhenEitherHalfIsSetAndTheSizeThresholdIsAKnob) {
  EXPECT_FALSE(host_copy_forced()) << "unset: the ring picks per call";
  EXPECT_EQ(host_ce_min_bytes(), knob_default<std::size_t>(Knob::gpu_host_ce_min_bytes));
  {
    ScopedEnv send("CCBENCH_GPU_HOST_SEND", "sm");
    EXPECT_TRUE(host_copy_forced()) << "sm given explicitly forces sm for every size";
  }
  ScopedEnv empty("CCBENCH_GPU_HOST_RECV", "");
  EXPECT_FALSE(host_copy_forced()) << "empty means unset";
  ScopedEnv min("CCBENCH_GPU_HOST_CE_MIN_BYTES", "64M");
  EXPECT_EQ(host_ce_min_bytes(), std::size_t(64) << 20);
  ScopedEnv bad("CCBENCH_GPU_HOST_CE_MIN_BYTES", "lots");
  EXPECT_NE(usage_error([] { host_ce_min_bytes(); }).find("CCBENCH_GPU_HOST_CE_MIN_BYTES"), std::string::npos);
}

TEST(HostCopyModes, NoteForTheAlgorithmColumn) {
  EXPECT_EQ(host_copy_note({}), "");
  EXPECT_EQ(host_copy_note({HostCopy::ce, HostCopy::sm}), " (host ce:recv)");
  EXPECT_EQ(host_copy_note({HostCopy::sm, HostCopy::ce}), " (host ce:send)");
  EXPECT_EQ(host_copy_note({HostCopy::ce, HostCopy::ce}), " (host ce:recv+send)");
}

// Copies that land when the test (or a random draw) completes them, in order per FIFO as on one
// CUDA stream: a stage that published a tail too early would expose the old slot contents.
class DeferredCopier final : public SlotCopier {
 public:
  struct Copy {
    int slot;
    void* dst;
    const void* src;
    std::size_t bytes;
  };
  explicit DeferredCopier(std::deque<Copy>* pending, std::vector<bool>* landed)
      : pending_(pending), landed_(landed) {}
  void copy(int slot, void* dst, const void* src, std::size_t bytes) override {
    EXPECT_TRUE((*landed_)[static_cast<std::size_t>(slot)]) << "slot " << slot << " reused while its copy ran";
    (*landed_)[static_cast<std::size_t>(slot)] = false;
    pending_->push_back({slot, dst, src, bytes});
  }
  bool done(int slot) override { return (*landed_)[static_cast<std::size_t>(slot)]; }

 private:
  std::deque<Copy>* pending_;
  std::vector<bool>* landed_;
};

// A copier and what it has in flight.
struct Copies {
  std::deque<DeferredCopier::Copy> pending;
  std::vector<bool> landed = std::vector<bool>(kSlots, true);
  std::unique_ptr<SlotCopier> copier() { return std::make_unique<DeferredCopier>(&pending, &landed); }
  // Completes the oldest copy; false when none is in flight.
  bool land_one() {
    if (pending.empty()) return false;
    const DeferredCopier::Copy c = pending.front();
    pending.pop_front();
    std::memcpy(c.dst, c.src, c.bytes);
    landed[static_cast<std::size_t>(c.slot)] = true;
    return true;
  }
};

// One FIFO in host memory: slots, sizes, tail and head.
struct Fifo {
  std::vector<char> slots = std::vector<char>(kSlots * kSlotBytes, 0);
  volatile std::uint64_t sizes[kSlots] = {};
  volatile std::uint64_t tail = 0, head = 0;
  char* slot(std::uint64_t step) { return slots.data() + (step % kSlots) * kSlotBytes; }
};

StageEnds ends(Fifo& src, Fifo& dst, bool src_sizes, bool dst_sizes) {
  StageEnds e;
  e.peer = 7;
  e.src_slots = src.slots.data();
  e.src_tail = &src.tail;
  e.src_sizes = src_sizes ? src.sizes : nullptr;
  e.src_head = &src.head;
  e.dst_slots = dst.slots.data();
  e.dst_tail = &dst.tail;
  e.dst_sizes = dst_sizes ? dst.sizes : nullptr;
  e.dst_head = &dst.head;
  return e;
}

// The producer's side of the FIFO contract: a step of `bytes` filled with `fill`.
void produce(Fifo& f, std::size_t bytes, char fill) {
  const std::uint64_t step = f.tail;
  ASSERT_LT(step, f.head + kSlots) << "the producer has no free slot";
  std::memset(f.slot(step), fill, bytes);
  f.sizes[step % kSlots] = bytes;
  f.tail = step + 1;
}

TEST(FifoStage, PublishesATailOnlyOnceItsCopyHasLanded) {
  Fifo src, dst;
  Copies c;
  FifoStage stage(ends(src, dst, true, true), kSlotBytes, c.copier());
  EXPECT_FALSE(stage.advance());  // nothing published yet
  produce(src, 100, 'a');
  EXPECT_TRUE(stage.advance());
  EXPECT_EQ(stage.started(), 1u);
  ASSERT_EQ(c.pending.size(), 1u);
  EXPECT_EQ(c.pending.front().bytes, 100u);  // the step's bytes only
  EXPECT_FALSE(stage.advance());
  EXPECT_EQ(dst.tail, 0u);
  EXPECT_EQ(src.head, 0u);  // the copy still reads the source slot
  ASSERT_TRUE(c.land_one());
  EXPECT_TRUE(stage.advance());
  EXPECT_EQ(dst.tail, 1u);
  EXPECT_EQ(src.head, 1u);
  EXPECT_EQ(dst.sizes[0], 100u);
  EXPECT_EQ(dst.slots[99], 'a');
  EXPECT_EQ(dst.slots[100], 0);  // beyond the step's bytes: not copied
}

// std::atomic_ref on a counter off its 8-byte alignment is undefined (it may tear across two cache
// lines): a stage handed one refuses to start, naming the counter and the peer.
TEST(FifoStage, RefusesACounterOffItsAlignment) {
  static_assert(kHostFlagAlign == 8, "64-bit FIFO counters: atomic_ref needs 8-byte alignment");
  Fifo src, dst;
  alignas(8) unsigned char raw[2 * sizeof(std::uint64_t)] = {};
  for (std::size_t off : {1, 4}) {
    StageEnds e = ends(src, dst, true, true);
    e.dst_tail = reinterpret_cast<volatile std::uint64_t*>(raw + off);
    Copies c;
    try {
      FifoStage stage(e, kSlotBytes, c.copier());
      ADD_FAILURE() << "a destination tail " << off << " bytes off its alignment was accepted";
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), ExitCode::runtime);
      const std::string m = err.what();
      EXPECT_NE(m.find("FIFO counter destination tail of the stage with rank 7"), std::string::npos) << m;
      EXPECT_NE(m.find("is not 8-byte aligned"), std::string::npos) << m;
    }
  }
  Copies c;
  FifoStage aligned(ends(src, dst, true, true), kSlotBytes, c.copier());  // the laid-out counters pass
  EXPECT_FALSE(aligned.advance());
}

TEST(FifoStage, WholeSlotsWhereTheSourceKeepsNoSizes) {
  Fifo src, dst;
  Copies c;
  FifoStage stage(ends(src, dst, false, false), kSlotBytes, c.copier());
  produce(src, 10, 'b');
  stage.advance();
  ASSERT_EQ(c.pending.size(), 1u);
  EXPECT_EQ(c.pending.front().bytes, kSlotBytes);
  c.land_one();
  stage.advance();
  EXPECT_EQ(dst.tail, 1u);
  EXPECT_EQ(dst.sizes[0], 0u);  // the destination keeps no sizes: none written
}

TEST(FifoStage, StartsNoCopyIntoASlotItsConsumerHasNotFreed) {
  Fifo src, dst;
  Copies c;
  FifoStage stage(ends(src, dst, true, false), kSlotBytes, c.copier());
  for (int i = 0; i < kSlots; ++i) produce(src, kSlotBytes, static_cast<char>('0' + i));
  stage.advance();
  while (c.land_one()) stage.advance();
  EXPECT_EQ(dst.tail, static_cast<std::uint64_t>(kSlots));
  EXPECT_EQ(src.head, static_cast<std::uint64_t>(kSlots));  // every source slot free again
  produce(src, kSlotBytes, 'x');
  EXPECT_FALSE(stage.advance());  // the consumer still holds every destination slot
  EXPECT_TRUE(c.pending.empty());
  dst.head = 1;  // the consumer frees step 0's slot
  EXPECT_TRUE(stage.advance());
  ASSERT_EQ(c.pending.size(), 1u);
  EXPECT_EQ(c.pending.front().dst, dst.slots.data());
  c.land_one();
  stage.advance();
  EXPECT_EQ(dst.tail, static_cast<std::uint64_t>(kSlots) + 1);
  EXPECT_EQ(dst.slots[0], 'x');
}

TEST(FifoStage, AStepLargerThanASlotIsARuntimeErrorNamingThePeer) {
  Fifo src, dst;
  Copies c;
  FifoStage stage(ends(src, dst, true, false), kSlotBytes, c.copier());
  src.sizes[0] = kSlotBytes + 1;
  src.tail = 1;
  try {
    stage.advance();
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::runtime);
    EXPECT_NE(std::string(e.what()).find("rank 7 has 257 bytes, more than a slot of 256"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(c.pending.empty());
}

// A sending kernel's FIFO -> (send stage) -> the shared host FIFO -> (receive stage) -> the
// receiving kernel's FIFO, as with both halves on the copy engines: every step arrives whole, in
// order, with its size, whatever order the copies and the two ends take turns in.
TEST(FifoStage, TwoStagesCarryAStreamOfStepsIntact) {
  Fifo sender, shared, receiver;
  Copies send_copies, recv_copies;
  FifoStage send(ends(sender, shared, true, true), kSlotBytes, send_copies.copier());
  FifoStage recv(ends(shared, receiver, true, false), kSlotBytes, recv_copies.copier());
  std::mt19937 rng(1);
  constexpr std::uint64_t kSteps = 2000;
  std::uint64_t produced = 0, consumed = 0;
  std::vector<std::size_t> bytes_of;
  while (consumed < kSteps) {
    switch (rng() % 5) {
      case 0:
        if (produced < kSteps && sender.tail < sender.head + kSlots) {
          bytes_of.push_back(rng() % (kSlotBytes + 1));
          produce(sender, bytes_of.back(), static_cast<char>(produced % 251 + 1));
          ++produced;
        }
        break;
      case 1: send.advance(); recv.advance(); break;
      case 2: send_copies.land_one(); break;
      case 3: recv_copies.land_one(); break;
      default:
        if (consumed < receiver.tail) {
          // The receiving kernel knows each step's size from its schedule; check the bytes.
          const std::size_t n = bytes_of[consumed];
          const char want = static_cast<char>(consumed % 251 + 1);
          const char* s = receiver.slot(consumed);
          for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(s[i], want) << "step " << consumed << " byte " << i;
          receiver.head = ++consumed;
        }
    }
  }
  EXPECT_EQ(send.published(), kSteps);
  EXPECT_EQ(recv.published(), kSteps);
  EXPECT_EQ(sender.head, kSteps);
  EXPECT_EQ(shared.head, kSteps);
}

}  // namespace
}  // namespace ccbench
