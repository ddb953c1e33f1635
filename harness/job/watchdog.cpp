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

void Watchdog::enter(std::string phase, std::chrono::milliseconds allowance, std::uint64_t calls_asked) {
  if (board_) board_->enter_phase(phase);
  {
    std::lock_guard<std::mutex> lock(mu_);
    phase_ = std::move(phase);
    since_ = last_progress_ = std::chrono::steady_clock::now();
    limit_ = allowance.count() > 0 ? allowance : timeout_;
    calls_asked_ = calls_asked;
    last_calls_ = 0;
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
    if (board_) board_->beat();
    if (stop_ || !armed_) continue;
    const auto now = std::chrono::steady_clock::now();
    const std::uint64_t calls = board_ ? board_->own_calls() : 0;
    if (calls != last_calls_) {
      last_calls_ = calls;
      last_progress_ = now;
    }
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - since_);
    if (waited < limit_) continue;
    const Expiry e{phase_, waited, calls, calls_asked_, calls > 0 && now - last_progress_ < kProgressWindow};
    armed_ = false;
    lock.unlock();
    on_expire_(e);  // normally does not return
    lock.lock();
  }
}

}  // namespace ccbench
