#pragma once
// Learns what NCCL chose for a collective (algorithm, protocol, channels) through NCCL's
// profiler plugin interface, version 4 (NCCL >= 2.26 loads it).
//
// The ccbench executable itself exports the plugin symbol `ncclProfiler_v4`, and
// enable_nccl_choice_probe() sets NCCL_PROFILER_PLUGIN=STATIC_PLUGIN, which makes NCCL take the
// plugin from the executable. Events stay switched off (NCCL then pays one atomic load per call)
// except between arm and take, which the harness wraps around one untimed warm-up call.
// A user's own NCCL_PROFILER_PLUGIN is left alone; nothing is learnt then.
#include <string>

namespace ccbench {

// Before the first NCCL communicator is created. Idempotent.
void enable_nccl_choice_probe();
// Records the next collective call NCCL launches on this process.
void arm_nccl_choice_probe();
// Switches recording off and returns what the armed call chose: "RING/LL128 16ch" (several
// distinct choices, as in a captured batch, joined by "+"); "" when nothing was recorded (the
// plugin was not loaded, or the call was no collective).
std::string take_nccl_choice();

}  // namespace ccbench
