#include "transports/gpu/fifo_stage.h"

#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "transports/gpu/host_flags.h"

namespace ccbench {

namespace {

constexpr std::uint64_t kSlots = gpu::kFifoSlots;

int slot_of(std::uint64_t step) { return static_cast<int>(step % kSlots); }

}  // namespace

FifoStage::FifoStage(const StageEnds& ends, std::size_t slot_bytes, std::unique_ptr<SlotCopier> copier)
    : ends_(ends), slot_(slot_bytes), copier_(std::move(copier)) {
  const std::string peer = fmt::format("of the stage with rank {}", ends.peer);
  require_flag_aligned(ends.src_tail, ("source tail " + peer).c_str());
  require_flag_aligned(ends.src_head, ("source head " + peer).c_str());
  require_flag_aligned(ends.dst_tail, ("destination tail " + peer).c_str());
  require_flag_aligned(ends.dst_head, ("destination head " + peer).c_str());
}

bool FifoStage::advance() {
  const bool published = publish_completed();
  return start_copies() | published;
}

bool FifoStage::publish_completed() {
  bool moved = false;
  while (published_ < started_ && copier_->done(slot_of(published_))) {
    const int slot = slot_of(published_);
    if (ends_.dst_sizes) ends_.dst_sizes[slot] = bytes_[slot];
    ++published_;
    host_store_release(ends_.dst_tail, published_);
    host_store_release(ends_.src_head, published_);
    moved = true;
  }
  return moved;
}

bool FifoStage::start_copies() {
  bool moved = false;
  const std::uint64_t ready = host_load_acquire(ends_.src_tail);
  const std::uint64_t free_until = host_load_acquire(ends_.dst_head) + kSlots;
  // started_ - published_ <= kSlots follows (the consumer frees only published steps), so a
  // slot's copy is restarted only after the stage saw its last one complete.
  while (started_ < ready && started_ < free_until) {
    const int slot = slot_of(started_);
    const std::uint64_t bytes = ends_.src_sizes ? ends_.src_sizes[slot] : slot_;
    if (bytes > slot_)
      fail(ExitCode::runtime, "host (copy engine): step {} with rank {} has {} bytes, more than a slot of {}", started_,
           ends_.peer, bytes, slot_);
    const std::size_t offset = static_cast<std::size_t>(slot) * slot_;
    bytes_[slot] = bytes;
    copier_->copy(slot, ends_.dst_slots + offset, ends_.src_slots + offset, static_cast<std::size_t>(bytes));
    ++started_;
    moved = true;
  }
  return moved;
}

}  // namespace ccbench
