#include "harness/progress.h"

#include <algorithm>

#include <fmt/format.h>

namespace ccbench {

namespace {
using Clock = std::chrono::steady_clock;
// A terminal line is redrawn at most this often: enough to look live, cheap beside a measurement.
constexpr std::chrono::milliseconds kTerminalRedraw{100};
}  // namespace

std::uint64_t ProgressPlan::variants(Collective c) const {
  std::uint64_t n = in_place != InPlaceChoice::yes ? 1 : 0;
  if (in_place != InPlaceChoice::no && supports_in_place(c)) ++n;
  return n;
}

std::uint64_t ProgressPlan::per_pair(Collective c) const {
  return dtypes * (has_reduce_op(c) ? ops : 1) * sizes * variants(c);
}

std::uint64_t ProgressPlan::per_cycle() const {
  std::uint64_t n = 0;
  for (Collective c : collectives) n += per_pair(c) * impls.size();
  return n;
}

std::string format_duration(std::chrono::duration<double> d) {
  const long long s = std::max(0LL, static_cast<long long>(d.count() + 0.5));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, (s % 3600) / 60);
}

ProgressSink::ProgressSink(std::unique_ptr<ResultSink> inner, ProgressPlan plan, ProgressSettings settings)
    : inner_(std::move(inner)), plan_(std::move(plan)), settings_(settings), start_(Clock::now()), last_shown_(start_) {
}

void ProgressSink::begin(const Json& context) {
  start_ = last_shown_ = Clock::now();
  inner_->begin(context);
}

void ProgressSink::add(const RunRecord& row) {
  clear_line();  // the table goes to the same terminal
  inner_->add(row);
  account(row);
  const auto now = Clock::now();
  if (settings_.terminal ? now - last_shown_ >= kTerminalRedraw || shown_ : now - last_shown_ >= settings_.interval)
    show();
}

void ProgressSink::finish(const RunOutcome& outcome) {
  clear_line();
  inner_->finish(outcome);
  if (shown_ && !settings_.terminal) {
    fmt::print(settings_.out, "ccbench: progress: {} measurements in {}, {}\n", done(),
               format_duration(Clock::now() - start_), outcome.complete ? "done" : "stopped early");
    std::fflush(settings_.out);
  }
}

void ProgressSink::account(const RunRecord& row) {
  auto coll = parse_collective(row.collective);
  const bool planned = coll && std::find(plan_.impls.begin(), plan_.impls.end(), row.impl) != plan_.impls.end();
  if (!planned || row.mode != "eager") return;  // skipped up front, or a graph row beside its eager twin
  std::uint64_t weight = 1;
  if (row.bytes == 0) weight = row.in_place ? 0 : plan_.sizes * plan_.variants(*coll);  // a whole case
  const std::string pair = row.collective + "/" + row.impl;
  if (pair != pair_ || (pair_done_ >= pair_total_ && weight > 0)) {  // a new pair, or the next cycle
    closed_ += pair_total_;
    pair_ = pair;
    pair_total_ = plan_.per_pair(*coll);
    pair_done_ = 0;
  }
  pair_done_ = std::min(pair_total_, pair_done_ + weight);
}

std::uint64_t ProgressSink::done() const { return closed_ + pair_done_; }

std::string ProgressSink::line() const {
  const auto elapsed = Clock::now() - start_;
  const std::uint64_t d = done();
  if (plan_.cycles == 0)
    return fmt::format("{} measurements, {} elapsed (cycles until stopped)", d, format_duration(elapsed));
  const std::uint64_t total = std::max<std::uint64_t>(1, plan_.per_cycle() * static_cast<std::uint64_t>(plan_.cycles));
  const std::uint64_t shown = std::min(d, total);
  std::string left = "estimating the time left";
  if (shown > 0) {
    const auto per = std::chrono::duration<double>(elapsed) / static_cast<double>(shown);
    left = "about " + format_duration(per * static_cast<double>(total - shown)) + " left";
  }
  return fmt::format("{}/{} measurements ({}%), {} elapsed, {}", shown, total, shown * 100 / total,
                     format_duration(elapsed), left);
}

void ProgressSink::clear_line() {
  if (settings_.terminal && shown_) {
    fmt::print(settings_.out, "\r\033[K");
    std::fflush(settings_.out);
  }
}

void ProgressSink::show() {
  if (settings_.terminal) fmt::print(settings_.out, "\rccbench: {}\033[K", line());
  else fmt::print(settings_.out, "ccbench: progress: {}\n", line());
  std::fflush(settings_.out);
  last_shown_ = Clock::now();
  shown_ = true;
}

}  // namespace ccbench
