#include "harness/job/watchdog.h"

namespace ccbench {

namespace {

// How often the deadline is checked: a timeout is reported at most this late, and the thread
// wakes only 10 times a second.
constexpr std::chrono::milliseconds kCheckInterval{100};

}  // namespace

Watchdog::Watchdog(std::chrono::milliseconds timeout, Handler on_expire)
    : timeout_(timeout), on_expire_(std::move(on_expire)), limit_(timeout), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::enter(std::string phase, std::chrono::milliseconds allowance) {
  if (board_) board_->enter_phase(phase);
  {
    std::lock_guard<std::mutex> lock(mu_);
    phase_ = std::move(phase);
    since_ = std::chrono::steady_clock::now();
    limit_ = allowance.count() > 0 ? allowance : timeout_;
    armed_ = true;
  }
  if (on_enter_) on_enter_();
}

void Watchdog::leave() {
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = false;
}

std::string Watchdog::phase() const {
  std::lock_guard<std::mutex> lock(mu_);
  return phase_;
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, kCheckInterval);
    if (stop_ || !armed_) continue;
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since_);
    if (waited < limit_) continue;
    std::string phase = phase_;
    armed_ = false;
    lock.unlock();
    on_expire_(phase, waited);  // normally does not return
    lock.lock();
  }
}

}  // namespace ccbench
