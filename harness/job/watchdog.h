#pragma once
// Deadlines for every phase of a run. The main thread names the phase it enters; if it stays in
// one phase longer than the timeout, the watchdog thread calls the expiry handler (which reports
// the phase, closes the result files as incomplete and ends the process with exit code 5).
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "harness/job/progress_board.h"

namespace ccbench {

// What the watchdog knows when a phase's deadline expires.
struct Expiry {
  std::string phase;
  std::chrono::milliseconds waited{};
  std::uint64_t calls_started = 0;  // synchronising calls this rank started in the phase (the board's count)
  std::uint64_t calls_asked = 0;    // how many the phase makes in all; 0: not known
  bool progressing = false;         // this rank started a call within the last kProgressWindow
};

class Watchdog {
 public:
  using Handler = std::function<void(const Expiry&)>;
  // A rank that started a call this recently is still working, not stuck: ten check intervals.
  static constexpr std::chrono::milliseconds kProgressWindow{1000};
  Watchdog(std::chrono::milliseconds timeout, Handler on_expire);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts the clock of `phase` (replacing the current one) and records it on the board, then
  // calls the observer (set_on_enter). Cheap: a lock and a string copy. `allowance`: how long
  // this phase may last; zero (the default) is the timeout. `calls_asked`: the synchronising
  // calls (arrive()) the phase makes, so that an expiry can tell a deadline too short for the
  // work (calls still being started) from a stuck rank; 0 where not known.
  void enter(std::string phase, std::chrono::milliseconds allowance = {}, std::uint64_t calls_asked = 0);
  // Called on the main thread at the end of every enter() until replaced; {} for none. Lets a
  // sub-group run report that it still makes progress (groups.cpp), at no cost to anyone else.
  // It may send messages or write rows: enter a phase before the barrier that starts a timed
  // region, never between the two.
  void set_on_enter(std::function<void()> observer) { on_enter_ = std::move(observer); }
  // A synchronising call (collective, barrier) is about to start: counted on the board.
  void arrive() {
    if (board_) board_->arrive();
  }
  // Where enter() and arrive() are recorded for the node's ranks to see, and where the watchdog
  // thread beats for this rank (ProgressBoard::beat); nullptr for none. Main thread only.
  void set_board(ProgressBoard* board) {
    std::lock_guard<std::mutex> lock(mu_);
    board_ = board;
  }
  // No phase: no deadline (e.g. while waiting for user input never happens; after the sweep).
  void leave();
  std::string phase() const;

 private:
  void loop();
  std::chrono::milliseconds timeout_;
  Handler on_expire_;
  std::function<void()> on_enter_;   // main thread only
  std::chrono::milliseconds limit_;  // the current phase's allowance
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string phase_;
  bool armed_ = false;
  bool stop_ = false;
  std::chrono::steady_clock::time_point since_;
  std::uint64_t calls_asked_ = 0;
  std::uint64_t last_calls_ = 0;                         // the board's count at the last check
  std::chrono::steady_clock::time_point last_progress_;  // when it last changed
  ProgressBoard* board_ = nullptr;
  std::thread thread_;
};

}  // namespace ccbench
