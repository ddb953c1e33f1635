#include "telemetry/counter_watch.h"

namespace ccbench::telemetry {

CounterWatch::CounterWatch(GpuSource& source, CounterPlan plan, std::chrono::milliseconds interval,
                           Clock::time_point epoch)
    : source_(source), plan_(std::move(plan)), interval_(interval), epoch_(epoch) {
  auto first = std::make_shared<const Snapshot>(read_counters(source_, plan_));
  at_start_ = {0, std::chrono::duration<double>(Clock::now() - epoch_).count(), first};
  latest_ = at_start_;
  if (!first->empty()) thread_ = std::thread([this] { loop(); });
}

CounterWatch::~CounterWatch() { stop(false); }

CounterRead CounterWatch::latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

CounterNews CounterWatch::take_news() {
  std::lock_guard lock(mu_);
  return std::exchange(news_, {});
}

void CounterWatch::stop(bool final_read) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    final_read_ = final_read;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CounterWatch::loop() {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    read_and_publish();
    lock.lock();
  }
  if (final_read_) {
    lock.unlock();
    read_and_publish();
  }
}

void CounterWatch::read_and_publish() {
  auto now = std::make_shared<const Snapshot>(read_counters(source_, plan_));  // the slow part, no lock held
  const double t = std::chrono::duration<double>(Clock::now() - epoch_).count();
  std::shared_ptr<const Snapshot> before = latest().snapshot;  // only this thread replaces it
  std::vector<Delta> grown;
  std::vector<FirstGrowth> first;
  for (Delta& d : counter_deltas(*before, *now)) {
    if (!d.growth || *d.growth == 0) continue;
    if (d.kind != CounterKind::nic_traffic && seen_growing_.insert({d.where, d.what}).second) first.push_back({d, t});
    grown.push_back(std::move(d));
  }
  std::lock_guard lock(mu_);
  latest_ = {latest_.seq + 1, t, std::move(now)};
  news_.first_growth.insert(news_.first_growth.end(), first.begin(), first.end());
  if (!grown.empty()) news_.growth.emplace_back(t, std::move(grown));
}

Json grown_json(const std::vector<Delta>& deltas) {
  Json a = Json::array();
  for (const Delta& d : deltas)
    if (d.growth && *d.growth > 0) a.push_back({{"where", d.where}, {"what", d.what}, {"growth", *d.growth}});
  return a;
}

}  // namespace ccbench::telemetry
