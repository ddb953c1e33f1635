#pragma once
// Recorded NVML answers: a JSON file of what a GPU source answered, written on a real node
// (`ccbench run --telemetry-record FILE`) and played back behind the same interface where no
// GPU is (unit tests, CCBENCH_TELEMETRY_NVML_REPLAY). The file:
//
//   {"format": "ccbench-nvml-answers-1", "driver": "580.65.06", "unavailable": "",
//    "gpus": [{"index": 0, "name": "NVIDIA H200", "uuid": "GPU-..."}],
//    "answers": {"0 temperature_c": [41, 42, 45], "0 nvlink_replay 3": [0, 0, 2],
//                "1 pcie_replays": [{"why_not": "not supported on this GPU"}]},
//    "latency_us": {"0 nvlink_replay 3": 4200}}
//
// Keys are "<gpu> <query>" or "<gpu> <query> <link>" (gpu_source.h names the queries); each
// holds the answers in the order they were given: a number, or {"why_not": text}. The optional
// "latency_us" holds how long NVML took to answer a key (the mean, in microseconds); playback
// takes that long too, so that a recording reproduces what reading the node costs.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "telemetry/gpu_source.h"

namespace ccbench::telemetry {

inline constexpr const char* kAnswersFormat = "ccbench-nvml-answers-1";
// Answers kept per key when recording: enough for an hour of sampling at 1 s, bounded memory.
inline constexpr size_t kMaxRecordedAnswersPerKey = 4096;

// Plays `answers` back: each key's answers in order, the last one repeating once they run out,
// each after its recorded latency; a key that was never recorded answers "not in the recorded
// answers". Throws Error(usage)
// naming what is wrong when the document is not such a file.
std::unique_ptr<GpuSource> replay_answers(const nlohmann::json& answers);
// The same from a file; throws Error(usage) naming the file when it cannot be read or parsed.
std::unique_ptr<GpuSource> replay_answers_file(const std::string& path);

// Passes every query to `inner` and keeps the answers and how long they took; write() saves
// them to `path` (also done by the destructor, errors then ignored).
class RecordingSource final : public GpuSource {
 public:
  RecordingSource(std::unique_ptr<GpuSource> inner, std::string path);
  ~RecordingSource() override;
  std::string unavailable() const override { return inner_->unavailable(); }
  std::string driver_version() const override { return inner_->driver_version(); }
  std::vector<GpuInfo> gpus() const override { return inner_->gpus(); }
  Answer read(unsigned gpu, Query q, unsigned link = 0) override;
  // Throws Error(usage) naming the path when it cannot be written.
  void write();

 private:
  struct State;
  std::unique_ptr<GpuSource> inner_;
  std::string path_;
  std::unique_ptr<State> state_;
};

// The key of one answer in the file.
std::string answer_key(unsigned gpu, Query q, unsigned link);

}  // namespace ccbench::telemetry
