#pragma once
// Waiting on the CPU: spin briefly, then yield, then sleep, so that runs with more ranks than
// cores (CI, laptops) stay fast and never livelock, while one rank per core reacts in ~100 ns.
#include <chrono>
#include <cstdint>
#include <thread>

namespace ccbench {

class Backoff {
 public:
  static constexpr std::uint64_t kSpins = 2000;
  static constexpr std::uint64_t kYields = 2000;

  Backoff() = default;
  // `spins` busy polls before the first yield. Where ranks outnumber cores, pass 0: a spinning
  // rank only keeps the rank it waits for off the CPU.
  Backoff(std::uint64_t spins, std::uint64_t yields) : spins_(spins), yields_(yields) {}

  // Call once per unsuccessful poll.
  void pause() {
    ++polls_;
    if (polls_ < spins_) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else if (polls_ < spins_ + yields_) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  void reset() { polls_ = 0; }
  std::uint64_t polls() const { return polls_; }

 private:
  std::uint64_t spins_ = kSpins;
  std::uint64_t yields_ = kYields;
  std::uint64_t polls_ = 0;
};

}  // namespace ccbench
