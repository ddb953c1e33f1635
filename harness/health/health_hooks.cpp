#include "harness/health/health_hooks.h"

#include "telemetry/energy.h"

namespace ccbench {

void HealthHook::end_row(MPI_Comm /*comm*/, const std::string& where, RunRecord& row) {
  row.health = sampler_.end_row(where);  // collective, like the agreement before it
}

void EnergyHook::extra_phase(RowCalls& calls) {
  if (!meter_.active()) return;
  calls.start("energy window", timeout_ + 2 * meter_.window());
  meter_.begin();
  const int per_call = calls.collectives_per_call();
  std::int64_t done = 0;  // calls
  for (std::int64_t more = meter_.more_calls(0, calls.batch_us()); more > 0;
       more = meter_.more_calls(done * per_call, calls.batch_us())) {
    const std::int64_t round = (more + per_call - 1) / per_call;
    calls.run(round);
    done += round;
  }
  joules_ = meter_.end();
  collectives_ = done * per_call;
  seconds_ = meter_.seconds();
  calls.check("after the energy window");
}

void EnergyHook::end_row(MPI_Comm /*comm*/, const std::string& /*where*/, RunRecord& row) {
  if (!joules_) return;
  if (auto e = telemetry::energy_figures(*joules_, collectives_, row.bytes)) {
    row.health.energy_per_coll_j = e->joules_per_collective;
    row.health.gb_per_joule = e->gb_per_joule;
    row.health.energy_window_s = seconds_;
  }
}

void EnergyHook::graph_row(RunRecord& row) const {
  row.health.energy_per_coll_j.reset();
  row.health.gb_per_joule.reset();
  row.health.energy_window_s.reset();
}

}  // namespace ccbench
