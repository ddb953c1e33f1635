#pragma once
// Energy per row across the job (`ccbench run --energy`; the counter, its resolution and the
// figures: telemetry/energy.h). The first rank on each GPU reads that GPU's counter (NVML, or the
// answers in CCBENCH_TELEMETRY_NVML_REPLAY), so a GPU shared by several ranks counts once; a
// window's joules are summed over the ranks. Only windows are measured, never the timed batch:
// ordinary runs are not lengthened, and with --energy every row spends one window more.
//
// Available when asked for on GPU ranks and every reading rank can read its counter; otherwise
// the energy columns stay empty and reason() says why, once for the run (run.json's "energy"
// block, and a line at start-up).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <mpi.h>

#include "collectives/implementation.h"
#include "results/record.h"
#include "topologies/layout.h"

namespace ccbench {

namespace telemetry {
class GpuSource;
class EnergyCounter;
}  // namespace telemetry

// Whether this rank reads its GPU's counter: the lowest rank on that GPU (RankLayout::same_gpu, by
// the GPUs' identities in gpu_of: never empty, so a GPU shared by several ranks counts once).
bool reads_its_gpu(const RankLayout& layout);

class EnergyMeter {
 public:
  // Collective over `comm`. `window` 0: off (nothing is opened).
  EnergyMeter(std::chrono::milliseconds window, MPI_Comm comm, const RankLayout& layout, Device device,
              int cuda_device);
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  bool active() const { return active_; }  // asked for and available: every row measures a window
  // Not measured in this run after all, for `why` (--groups other than world).
  void refuse(std::string why);
  const std::string& reason() const { return reason_; }  // why not, when asked for and not active
  std::chrono::milliseconds window() const { return window_; }
  // run.json's "energy" block: {"enabled", "available", "reason", "window_s", "method", "gpus"}.
  Json context() const;
  // "# energy: ..." for the start-up block ("" when off).
  std::string startup_line() const;

  // Local: the window begins (reading ranks read their counter; every rank starts its clock).
  void begin();
  // Collective: how many more collectives the window needs, the same on every rank (every rank
  // issues the same calls): none once every rank's clock has run for window(); else enough to
  // fill what is left at the slowest rank's time per collective so far (`done` collectives since
  // begin(), all complete; with none yet, `batch_us`, the timed batch's).
  std::int64_t more_calls(std::int64_t done, double batch_us);
  // Collective: the window ends; the joules every GPU of the job used in it, or nullopt when a
  // counter could not be read or went backwards on some rank.
  std::optional<double> end();
  // The window's length in seconds, the shortest rank's clock, as of the last more_calls().
  double seconds() const { return seconds_; }

 private:
  // Opens this rank's GPU's counter and reads it once: "" when it can be read, else why not.
  std::string open_counter(const std::string& uuid);

  MPI_Comm comm_;
  std::chrono::milliseconds window_;
  bool active_ = false;
  std::string reason_;
  int gpus_ = 0;                                  // GPUs read, over the job
  std::unique_ptr<telemetry::GpuSource> source_;  // reading ranks
  std::unique_ptr<telemetry::EnergyCounter> counter_;
  std::optional<std::uint64_t> start_mj_;
  std::chrono::steady_clock::time_point start_;
  double seconds_ = 0;
};

}  // namespace ccbench
