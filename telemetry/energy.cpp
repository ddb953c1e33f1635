#include "telemetry/energy.h"

#include <cmath>

#include <fmt/format.h>

namespace ccbench::telemetry {

std::string energy_method(std::chrono::milliseconds window) {
  const double s = window.count() / 1000.0;
  return fmt::format(
      "NVML total-energy counter over windows of >= {:g} s of the row's collective repeated back to "
      "back, summed over the job's GPUs; the counter moves in ~{} ms steps, so a figure is good to "
      "about +-{:.0f} %",
      s, kEnergyCounterStep.count(), 100.0 * kEnergyCounterStep.count() / window.count());
}

std::optional<std::uint64_t> EnergyCounter::read() {
  const Answer a = source_.read(position_, Query::energy_mj);
  if (!a.value) why_not_ = a.why_not;
  return a.value;
}

std::optional<unsigned> gpu_position(const GpuSource& source, const std::string& uuid) {
  const std::vector<GpuInfo> gpus = source.gpus();
  for (unsigned i = 0; i < gpus.size(); ++i)
    if (!uuid.empty() && gpus[i].uuid == uuid) return i;
  return std::nullopt;
}

std::int64_t energy_calls_left(std::chrono::duration<double, std::milli> elapsed, double call_us, std::int64_t done,
                               std::chrono::milliseconds window) {
  const double left_ms = static_cast<double>(window.count()) - elapsed.count();
  const std::int64_t most = kMaxEnergyCalls - done;
  if (!(left_ms > 0) || most <= 0) return 0;
  if (!(call_us > 0) || !std::isfinite(call_us)) return most;
  const double calls = std::ceil(left_ms * 1000.0 / call_us);
  return calls < 1 ? 1 : calls > static_cast<double>(most) ? most : static_cast<std::int64_t>(calls);
}

std::optional<EnergyFigures> energy_figures(double joules, std::int64_t calls, std::uint64_t bytes) {
  if (!(joules > 0) || calls <= 0) return std::nullopt;
  EnergyFigures f;
  f.joules_per_collective = joules / static_cast<double>(calls);
  f.gb_per_joule = static_cast<double>(bytes) / 1e9 / f.joules_per_collective;
  return f;
}

}  // namespace ccbench::telemetry
