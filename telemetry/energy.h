#pragma once
// Energy per row (`ccbench run --energy`): how much NVML's total-energy counter of a GPU
// (Query::energy_mj, millijoules since the driver loaded) grew over a window of the row's
// collective repeated back to back; the harness sums it over the job's GPUs and divides by the
// collectives of the window (harness/health/energy_meter.h).
//
// Resolution: the counter moves in steps. On an H200 it moved about every 100 ms: 8 ms of GEMM
// read 0 J, and 107 ms read 814 W apparent against a 700 W limit (evidence
// h200x1-20261201-reference). A window is therefore at least kMinEnergyWindow long by the wall
// clock, repeated collectives filling it, and its figure is good to about one step of energy at
// either end:
// +-kEnergyCounterStep / window (1 s: about +-10 %; --energy 10: about +-1 %).
// The energy is the whole GPU's, idle power included, while the collectives ran.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "telemetry/gpu_source.h"

namespace ccbench::telemetry {

inline constexpr std::chrono::milliseconds kEnergyCounterStep{100};  // H200 (evidence above)
inline constexpr std::chrono::milliseconds kMinEnergyWindow{1000};
// Calls a window may take at most: at ~5 us per small collective, 10^7 calls is a 50 s window.
inline constexpr std::int64_t kMaxEnergyCalls = 10'000'000;

// "NVML total-energy counter, windows >= 1 s of repeated collectives, good to +-10 %": the method
// and its resolution for a window of `window`.
std::string energy_method(std::chrono::milliseconds window);

// One GPU's counter. `source` must outlive the counter.
class EnergyCounter {
 public:
  EnergyCounter(GpuSource& source, unsigned position) : source_(source), position_(position) {}
  // Millijoules, or nullopt with why_not() saying why (no counter on this GPU, no NVML ...).
  std::optional<std::uint64_t> read();
  const std::string& why_not() const { return why_not_; }

 private:
  GpuSource& source_;
  unsigned position_;
  std::string why_not_;
};

// The position in source.gpus() of the GPU with this NVML UUID ("GPU-..."), or nullopt.
std::optional<unsigned> gpu_position(const GpuSource& source, const std::string& uuid);

// How many more collectives a window of `window` needs once `elapsed` of it has passed with
// `done` collectives of `call_us` each: none once elapsed reaches the window or done reaches
// kMaxEnergyCalls; else enough to fill what is left (at least 1), at most kMaxEnergyCalls - done.
// A call_us that is not a positive time asks for the most.
std::int64_t energy_calls_left(std::chrono::duration<double, std::milli> elapsed, double call_us, std::int64_t done,
                               std::chrono::milliseconds window);

// A row's energy columns from `joules` (every GPU of the job) over `calls` collectives of
// `bytes` (the row's algbw size) each; nullopt when there is nothing to divide (no energy, no
// calls, a counter that went backwards: negative joules).
struct EnergyFigures {
  double joules_per_collective = 0;
  double gb_per_joule = 0;  // bytes / 1e9 per joule: the data one joule moved
};
std::optional<EnergyFigures> energy_figures(double joules, std::int64_t calls, std::uint64_t bytes);

}  // namespace ccbench::telemetry
