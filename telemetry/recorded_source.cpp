#include "telemetry/recorded_source.h"

#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "results/sink.h"

namespace ccbench::telemetry {

namespace {

using nlohmann::json;

json answer_to_json(const Answer& a) { return a.value ? json(*a.value) : json{{"why_not", a.why_not}}; }

bool is_whole_number(const json& j) {
  return j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0);
}

Answer answer_from_json(const json& j, const std::string& key) {
  if (is_whole_number(j)) return {j.get<std::uint64_t>(), {}};
  if (j.is_object() && j.contains("why_not") && j["why_not"].is_string())
    return {std::nullopt, j["why_not"].get<std::string>()};
  fail(ExitCode::usage, "recorded NVML answers: '{}' holds {}; expected a whole number >= 0 or {{\"why_not\": text}}",
       key, j.dump());
}

class ReplaySource final : public GpuSource {
 public:
  explicit ReplaySource(const json& doc) {
    if (!doc.is_object() || doc.value("format", "") != kAnswersFormat)
      fail(ExitCode::usage, "recorded NVML answers: not a '{}' document", kAnswersFormat);
    unavailable_ = doc.value("unavailable", "");
    driver_ = doc.value("driver", "");
    const json gpus = doc.value("gpus", json::array());
    for (const json& g : gpus) {
      if (!g.is_object() || !g.contains("index") || !g["index"].is_number_unsigned())
        fail(ExitCode::usage, "recorded NVML answers: a GPU entry needs an 'index' (whole number): {}", g.dump());
      gpus_.push_back({g["index"].get<unsigned>(), g.value("name", "?"), g.value("uuid", "")});
    }
    const json answers = doc.value("answers", json::object());
    for (const auto& [key, list] : answers.items()) {
      if (!list.is_array() || list.empty())
        fail(ExitCode::usage, "recorded NVML answers: '{}' must be a non-empty list of answers", key);
      for (const json& a : list) answers_[key].push_back(answer_from_json(a, key));
    }
    const json latency = doc.value("latency_us", json::object());
    if (!latency.is_object())
      fail(ExitCode::usage, "recorded NVML answers: 'latency_us' must be an object of key: microseconds");
    for (const auto& [key, us] : latency.items()) {
      if (!is_whole_number(us))
        fail(ExitCode::usage,
             "recorded NVML answers: latency_us '{}' holds {}; expected microseconds, a whole number >= 0", key,
             us.dump());
      latency_[key] = std::chrono::microseconds(us.get<std::uint64_t>());
    }
    if (unavailable_.empty() && gpus_.empty()) unavailable_ = "the recorded answers list no GPU";
  }

  std::string unavailable() const override { return unavailable_; }
  std::string driver_version() const override { return driver_; }
  std::vector<GpuInfo> gpus() const override { return gpus_; }

  Answer read(unsigned gpu, Query q, unsigned link) override {
    if (!unavailable_.empty()) return {std::nullopt, unavailable_};
    const std::string key = answer_key(gpu, q, link);
    if (auto l = latency_.find(key); l != latency_.end())
      std::this_thread::sleep_for(l->second);  // outside the lock, as NVML
    std::lock_guard lock(mutex_);
    auto it = answers_.find(key);
    if (it == answers_.end()) return {std::nullopt, fmt::format("'{}' is not in the recorded answers", key)};
    size_t& next = next_[key];
    const Answer& a = it->second[std::min(next, it->second.size() - 1)];
    ++next;
    return a;
  }

 private:
  std::string unavailable_, driver_;
  std::vector<GpuInfo> gpus_;
  std::mutex mutex_;  // the sampling thread and the main thread read at once
  std::map<std::string, std::vector<Answer>> answers_;
  std::map<std::string, size_t> next_;
  std::map<std::string, std::chrono::microseconds> latency_;  // read-only after construction
};

}  // namespace

std::string answer_key(unsigned gpu, Query q, unsigned link) {
  return is_nvlink_query(q) ? fmt::format("{} {} {}", gpu, query_name(q), link)
                            : fmt::format("{} {}", gpu, query_name(q));
}

std::unique_ptr<GpuSource> replay_answers(const nlohmann::json& answers) {
  return std::make_unique<ReplaySource>(answers);
}

std::unique_ptr<GpuSource> replay_answers_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(ExitCode::usage, "cannot read the recorded NVML answers '{}'", path);
  try {
    return replay_answers(json::parse(in));
  } catch (const json::exception& e) {
    fail(ExitCode::usage, "recorded NVML answers '{}' are not valid JSON: {}", path, e.what());
  } catch (const Error& e) {
    throw e.with_context(path);
  }
}

struct RecordingSource::State {
  std::mutex mutex;
  json answers = json::object();
  std::map<std::string, std::pair<std::chrono::nanoseconds, std::uint64_t>> took;  // key -> total time, calls
};

RecordingSource::RecordingSource(std::unique_ptr<GpuSource> inner, std::string path)
    : inner_(std::move(inner)), path_(std::move(path)), state_(std::make_unique<State>()) {}

RecordingSource::~RecordingSource() {
  try {
    write();
  } catch (const Error&) {  // the run already reported its results; a lost recording is not fatal
  }
}

Answer RecordingSource::read(unsigned gpu, Query q, unsigned link) {
  const auto begin = std::chrono::steady_clock::now();
  Answer a = inner_->read(gpu, q, link);
  const auto took = std::chrono::steady_clock::now() - begin;
  const std::string key = answer_key(gpu, q, link);
  std::lock_guard lock(state_->mutex);
  json& list = state_->answers[key];
  if (list.size() < kMaxRecordedAnswersPerKey) list.push_back(answer_to_json(a));
  auto& [total, calls] = state_->took[key];
  total += took;
  ++calls;
  return a;
}

void RecordingSource::write() {
  json doc = {{"format", kAnswersFormat}, {"driver", driver_version()}, {"unavailable", unavailable()}};
  json gpus = json::array();
  for (const GpuInfo& g : inner_->gpus()) gpus.push_back({{"index", g.index}, {"name", g.name}, {"uuid", g.uuid}});
  doc["gpus"] = gpus;
  {
    std::lock_guard lock(state_->mutex);
    doc["answers"] = state_->answers;
    json latency = json::object();
    for (const auto& [key, t] : state_->took)
      latency[key] = std::chrono::duration_cast<std::chrono::microseconds>(t.first).count() / t.second;
    doc["latency_us"] = latency;
  }
  write_file_atomically(path_, doc.dump(1) + "\n");
}

}  // namespace ccbench::telemetry
