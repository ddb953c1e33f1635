#pragma once
// The sweep's health figures per row, attached to it as hooks (harness/engine/runner_hook.h).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "harness/health/energy_meter.h"
#include "harness/engine/runner_hook.h"
#include "telemetry/sampler.h"

namespace ccbench {

// Health telemetry (telemetry/sampler.h): the sampler marks each measured row's start (reading
// nothing, never inside the timed loop) and gives the row's health columns at its end
// (collective). `sampler` outlives the hook.
class HealthHook : public RunnerHook {
 public:
  explicit HealthHook(telemetry::Sampler& sampler) : sampler_(sampler) {}
  void begin_row() override { sampler_.begin_row(); }
  void end_row(MPI_Comm comm, const std::string& where, RunRecord& row) override;

 private:
  telemetry::Sampler& sampler_;
};

// Energy per row (--energy): after the timed phases (whose figures stay those of an ordinary run)
// the collective back to back for at least the meter's window, on fresh input, the job's GPUs'
// energy over it (harness/health/energy_meter.h), its output checked as the batch's. The window is sized
// by its own wall clock, in rounds: the batch's time per call sizes the first, and every rank's
// clock says when it is long enough (the --overlap load has stopped by then, so a batch slowed by
// it would otherwise give a window that much shorter than asked). The phase may outlast the
// timeout by design: it gets `timeout` beyond twice the window. A measured row gets the energy
// columns, its CUDA-graph row none (the window ran eager calls). Nothing while the meter is not
// active. `meter` outlives the hook.
class EnergyHook : public RunnerHook {
 public:
  EnergyHook(EnergyMeter& meter, std::chrono::milliseconds timeout) : meter_(meter), timeout_(timeout) {}
  void begin_row() override { joules_.reset(); }
  void extra_phase(RowCalls& calls) override;
  void end_row(MPI_Comm comm, const std::string& where, RunRecord& row) override;
  void graph_row(RunRecord& row) const override;

 private:
  EnergyMeter& meter_;
  std::chrono::milliseconds timeout_;
  // The current row's window: the job's GPUs' joules (agreed), its collectives and length (s, agreed).
  std::optional<double> joules_;
  std::int64_t collectives_ = 0;
  double seconds_ = 0;
};

}  // namespace ccbench
