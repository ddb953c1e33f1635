#pragma once
// What the command line sets for health telemetry (`ccbench run --telemetry ...`): the options,
// declared on the option layer (core/cli_options.h), and the checks between them.
#include <chrono>
#include <string>

#include "core/cli_options.h"

namespace ccbench::telemetry {

struct Options {
  bool enabled = true;                               // --telemetry on|off
  std::chrono::milliseconds interval{100};           // --telemetry-interval MS: temperature, power, clocks...
  std::chrono::milliseconds counter_interval{1000};  // --telemetry-counter-interval MS: error counters
  double temp_limit_c = 85;                          // --temp-limit C
  bool fail_on_health = false;                       // --fail-on-health: exit code 4 when a check fails
  std::string record_path;                           // --telemetry-record FILE: save NVML's answers
  // --energy off|on|SECONDS: GPU energy per row over windows at least this long
  // (telemetry/energy.h); 0 = off.
  std::chrono::milliseconds energy_window{0};
};

// Declares the telemetry options of `run`, bound to `o` (its values are the defaults shown).
void add_options(cli::OptionSet& run, Options& o);
// The checks between them, after parsing: Error(usage) saying what is wrong and what is valid.
void check_options(const Options& o);

}  // namespace ccbench::telemetry
