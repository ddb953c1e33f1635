#pragma once
// Deadlines for every phase of a run. The main thread names the phase it enters; if it stays in
// one phase longer than the timeout, the watchdog thread calls the expiry handler (which reports
// the phase, closes the result files as incomplete and ends the process with exit code 5).
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "harness/job/progress_board.h"

namespace ccbench {

class Watchdog {
 public:
  using Handler = std::function<void(const std::string& phase, std::chrono::milliseconds waited)>;
  Watchdog(std::chrono::milliseconds timeout, Handler on_expire);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts the clock of `phase` (replacing the current one) and records it on the board, then
  // calls the observer (set_on_enter). Cheap: a lock and a string copy. `allowance`: how long
  // this phase may last; zero (the default) is the timeout.
  void enter(std::string phase, std::chrono::milliseconds allowance = {});
  // Called on the main thread at the end of every enter() until replaced; {} for none. Lets a
  // sub-group run report that it still makes progress (groups.cpp), at no cost to anyone else.
  // It may send messages or write rows: enter a phase before the barrier that starts a timed
  // region, never between the two.
  void set_on_enter(std::function<void()> observer) { on_enter_ = std::move(observer); }
  // A synchronising call (collective, barrier) is about to start: counted on the board.
  void arrive() {
    if (board_) board_->arrive();
  }
  // Where enter() and arrive() are recorded for the node's ranks to see; nullptr for none.
  // Main thread only.
  void set_board(ProgressBoard* board) { board_ = board; }
  // No phase: no deadline (e.g. while waiting for user input never happens; after the sweep).
  void leave();
  std::string phase() const;

 private:
  void loop();
  std::chrono::milliseconds timeout_;
  Handler on_expire_;
  std::function<void()> on_enter_;  // main thread only
  std::chrono::milliseconds limit_;  // the current phase's allowance
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string phase_;
  bool armed_ = false;
  bool stop_ = false;
  std::chrono::steady_clock::time_point since_;
  ProgressBoard* board_ = nullptr;
  std::thread thread_;
};

}  // namespace ccbench
