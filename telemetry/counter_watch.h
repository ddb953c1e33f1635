#pragma once
// The error counters of a node (counters.h), read on a thread of their own: once at start (in
// the constructor, before anything is measured), then `interval` after the previous read ended,
// and once more at the end of the run (stop(true)). One read asks NVML four questions per active
// NVLink link, each taking milliseconds, so the measuring thread never reads: it only takes the
// latest read (a pointer copy under a lock) when a size begins and ends.
//
// Thread: every member is called from one thread (the main one); the reads after the first
// happen on the watch's thread. Nothing here is touched while a size is timed.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "telemetry/counters.h"
#include "telemetry/gpu_source.h"

namespace ccbench::telemetry {

// One full read of the counters.
struct CounterRead {
  std::uint64_t seq = 0;  // 0: the read at start; each later read adds 1
  double t_s = 0;         // when the read ended, in seconds since the watch's epoch
  std::shared_ptr<const Snapshot> snapshot;
};

// The first growth of one error counter (where, what) in this run, and when the read that saw
// it ended. Traffic counters (NIC data) are never "first growth": they are not errors.
struct FirstGrowth {
  Delta delta;
  double t_s = 0;
};

// What the reads found since the last take_news().
struct CounterNews {
  std::vector<FirstGrowth> first_growth;
  // Every read that saw some counter grow (traffic included): when it ended, what grew.
  std::vector<std::pair<double, std::vector<Delta>>> growth;
};

class CounterWatch {
 public:
  using Clock = std::chrono::steady_clock;
  // Reads every counter of `plan` once (the start), and starts the thread when the plan has
  // anything to read. `source` must outlive the watch.
  CounterWatch(GpuSource& source, CounterPlan plan, std::chrono::milliseconds interval, Clock::time_point epoch);
  ~CounterWatch();  // stop(false)
  CounterWatch(const CounterWatch&) = delete;
  CounterWatch& operator=(const CounterWatch&) = delete;

  const CounterPlan& plan() const { return plan_; }
  const CounterRead& at_start() const { return at_start_; }
  CounterRead latest() const;
  CounterNews take_news();
  // Ends the thread; with `final_read` it reads once more first (the run's end). Idempotent.
  void stop(bool final_read);

 private:
  void loop();
  void read_and_publish();

  GpuSource& source_;
  const CounterPlan plan_;
  const std::chrono::milliseconds interval_;
  const Clock::time_point epoch_;
  CounterRead at_start_;
  std::set<std::pair<std::string, std::string>> seen_growing_;  // the thread's own: (where, what)

  mutable std::mutex mu_;  // guards what follows; held only to publish or take, never to read
  std::condition_variable cv_;
  bool stopping_ = false, final_read_ = false;
  CounterRead latest_;
  CounterNews news_;
  std::thread thread_;
};

// The deltas that grew (growth > 0), as JSON: [{"where", "what", "growth"}].
Json grown_json(const std::vector<Delta>& deltas);

}  // namespace ccbench::telemetry
