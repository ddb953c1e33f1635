#include "transports/net/slot_flow.h"

#include <fmt/format.h>

#include "core/error.h"

namespace ccbench {

CreditWindow::CreditWindow(std::string_view transport, std::uint32_t slots) : transport_(transport), slots_(slots) {
  if (slots == 0) fail(ExitCode::usage, "{}: a credit window needs at least one slot", transport_);
}

void CreditWindow::on_post() {
  if (!can_post())
    fail(ExitCode::runtime, "{}: slot posted with all {} slots in flight (no credit)", transport_, slots_);
  ++posted_;
}

void CreditWindow::on_credit(std::uint32_t n) {
  if (credited_ + n > posted_)
    fail(ExitCode::runtime,
         "{}: the receiver returned {} credits with only {} slots outstanding ({} posted, {} "
         "credited)",
         transport_, n, posted_ - credited_, posted_, credited_);
  credited_ += n;
}

std::uint64_t SlotRegion::offset_of(std::uint64_t data, std::uint64_t n) const {
  if (data < base || n > bytes() || data - base > bytes() - n)
    fail(ExitCode::runtime, "zero-copy send of {} bytes at {:#x} lies outside the registered slots [{:#x}, {:#x})", n,
         data, base, base + bytes());
  return data - base;
}

InOrderCompletions::InOrderCompletions(std::string_view transport, std::uint32_t depth)
    : transport_(transport), completed_(depth, false) {
  if (depth == 0) fail(ExitCode::usage, "{}: a send window needs at least one slot", transport_);
}

void InOrderCompletions::on_post() {
  if (outstanding() == completed_.size())
    fail(ExitCode::runtime, "{}: post {} with all {} slots' writes outstanding", transport_, posted_,
         completed_.size());
  ++posted_;
}

void InOrderCompletions::on_complete(std::uint64_t seq) {
  const std::size_t slot = static_cast<std::size_t>(seq % completed_.size());
  if (seq < done_ || seq >= posted_ || completed_[slot])
    fail(ExitCode::runtime, "{}: completion of post {}, which is not outstanding (posts {} to {} are)", transport_, seq,
         done_, posted_);
  completed_[slot] = true;
  while (done_ < posted_ && completed_[static_cast<std::size_t>(done_ % completed_.size())]) {
    completed_[static_cast<std::size_t>(done_ % completed_.size())] = false;
    ++done_;
  }
}

ArrivalRing::ArrivalRing(std::string_view transport, std::uint32_t depth)
    : transport_(transport), length_(depth, kEmpty) {
  if (depth == 0) fail(ExitCode::usage, "{}: a receive channel needs at least one slot", transport_);
}

void ArrivalRing::on_arrival(std::uint64_t seq, std::uint64_t bytes, std::string_view peer) {
  std::uint64_t& len = length_[static_cast<std::size_t>(seq % length_.size())];
  if (seq < released_ || seq >= released_ + length_.size() || len != kEmpty)
    fail(ExitCode::runtime,
         "{}: {} wrote message {} into slot {} while messages {} to {} may use the slots (written "
         "without a credit, or twice)",
         transport_, peer, seq, seq % length_.size(), released_, released_ + length_.size() - 1);
  len = bytes;
}

std::uint64_t ArrivalRing::seq_of_slot(std::uint32_t slot) const {
  const std::uint64_t d = length_.size();
  return released_ + (slot % d + d - released_ % d) % d;
}

std::optional<std::uint64_t> ArrivalRing::peek() const {
  const std::uint64_t len = length_[static_cast<std::size_t>(released_ % length_.size())];
  if (len == kEmpty) return std::nullopt;
  return len;
}

std::optional<ArrivalRing::Taken> ArrivalRing::take() {
  if (taken_ == released_ + length_.size()) return std::nullopt;  // every slot taken, none released
  const auto slot = static_cast<std::uint32_t>(taken_ % length_.size());
  if (length_[slot] == kEmpty) return std::nullopt;
  ++taken_;
  return Taken{slot, length_[slot]};
}

void ArrivalRing::release() {
  std::uint64_t& len = length_[static_cast<std::size_t>(released_ % length_.size())];
  if (len == kEmpty) fail(ExitCode::runtime, "{}: release of message {}, which has not arrived", transport_, released_);
  len = kEmpty;
  ++released_;
  if (taken_ < released_) taken_ = released_;
}

}  // namespace ccbench
