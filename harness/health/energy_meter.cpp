#include "harness/health/energy_meter.h"

#include <array>

#include <fmt/format.h>

#include "core/checks.h"
#include "core/error.h"
#include "harness/job/bootstrap.h"
#include "harness/engine/startup.h"
#include "telemetry/energy.h"
#include "telemetry/sampler.h"

namespace ccbench {

EnergyMeter::EnergyMeter(std::chrono::milliseconds window, MPI_Comm comm, const RankLayout& layout, Device device,
                         int cuda_device)
    : comm_(comm), window_(window) {
  if (window.count() == 0) return;
  if (device != Device::gpu) {
    reason_ = "CPU ranks: the energy counter is a GPU's (NVML)";
    return;
  }
  const bool reader = reads_its_gpu(layout);
  std::string mine;  // why this rank cannot read its GPU's counter; local, so every rank reaches the agreement
  if (reader) {
    const std::string uuid = gpu_uuid(cuda_device);
    try {
      mine = open_counter(uuid);
    } catch (const Error& e) {  // a replay file that cannot be read
      mine = e.what();
    }
    if (!mine.empty()) mine = fmt::format("rank {} (host {}, GPU {}): {}", layout.rank, layout.host(), uuid, mine);
  }
  for (const std::string& why : gather_strings(comm, mine))  // rank 0 holds them
    if (reason_.empty() && !why.empty()) reason_ = why;
  std::array<int, 2> local{reader ? 1 : 0, mine.empty() ? 0 : 1}, total{};
  check_mpi(MPI_Allreduce(local.data(), total.data(), 2, MPI_INT, MPI_SUM, comm),
            "MPI_Allreduce of the energy readers");
  gpus_ = total[0];
  active_ = total[1] == 0;
  if (!active_ && reason_.empty()) reason_ = "a rank cannot read its GPU's energy counter (rank 0 has the reason)";
}

EnergyMeter::~EnergyMeter() = default;

bool reads_its_gpu(const RankLayout& layout) {
  for (int r = 0; r < layout.rank; ++r)
    if (layout.same_gpu(r, layout.rank, 0)) return false;
  return true;
}

std::string EnergyMeter::open_counter(const std::string& uuid) {
  source_ = telemetry::open_gpu_source();
  if (!source_->unavailable().empty()) return source_->unavailable();
  const auto position = telemetry::gpu_position(*source_, uuid);
  if (!position) return fmt::format("NVML lists no GPU with the CUDA device's UUID '{}'", uuid);
  counter_ = std::make_unique<telemetry::EnergyCounter>(*source_, *position);
  if (!counter_->read()) return counter_->why_not();
  return "";
}

void EnergyMeter::refuse(std::string why) {
  if (window_.count() == 0) return;
  active_ = false;
  reason_ = std::move(why);
}

Json EnergyMeter::context() const {
  if (window_.count() == 0) return {{"enabled", false}};
  return {{"enabled", true},
          {"available", active_},
          {"reason", active_ ? Json(nullptr) : Json(reason_)},
          {"window_s", window_.count() / 1000.0},
          {"method", telemetry::energy_method(window_)},
          {"gpus", gpus_}};
}

std::string EnergyMeter::startup_line() const {
  if (window_.count() == 0) return "";
  if (!active_) return fmt::format("# energy: not available ({})\n", reason_);
  return fmt::format("# energy: {} GPU{}: {}\n", gpus_, gpus_ == 1 ? "" : "s", telemetry::energy_method(window_));
}

void EnergyMeter::begin() {
  start_mj_ = counter_ ? counter_->read() : std::nullopt;
  start_ = std::chrono::steady_clock::now();
  seconds_ = 0;
}

std::int64_t EnergyMeter::more_calls(std::int64_t done, double batch_us) {
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start_;
  // MPI_MAX of -elapsed: the shortest clock; of the time per call: the slowest rank's.
  std::array<double, 2> mine{-elapsed.count(),
                             done > 0 ? elapsed.count() * 1000.0 / static_cast<double>(done) : batch_us},
      most{};
  check_mpi(MPI_Allreduce(mine.data(), most.data(), 2, MPI_DOUBLE, MPI_MAX, comm_),
            "MPI_Allreduce of the energy window");
  const std::chrono::duration<double, std::milli> shortest(-most[0]);
  seconds_ = shortest.count() / 1000.0;
  return telemetry::energy_calls_left(shortest, most[1], done, window_);
}

std::optional<double> EnergyMeter::end() {
  // This rank's growth in joules; -1 marks a counter that could not be read or went backwards.
  double mine = 0;
  if (counter_) {
    const auto end_mj = counter_->read();
    mine = start_mj_ && end_mj && *end_mj >= *start_mj_ ? static_cast<double>(*end_mj - *start_mj_) / 1000.0 : -1;
  }
  std::array<double, 2> local{mine < 0 ? 0 : mine, mine < 0 ? 1.0 : 0.0}, total{};
  check_mpi(MPI_Allreduce(local.data(), total.data(), 2, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce of the energy");
  if (total[1] > 0) return std::nullopt;
  return total[0];
}

}  // namespace ccbench
