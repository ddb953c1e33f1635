#pragma once
// What the command line sets for health telemetry (`ccbench run --telemetry ...`), and the
// registration of those options with the CLI, so that the parser only has to call two
// functions.
#include <chrono>
#include <string>

namespace CLI {
class App;
}

namespace ccbench::telemetry {

struct Options {
  bool enabled = true;   // --telemetry on|off
  std::chrono::milliseconds interval{100};     // --telemetry-interval MS: temperature, power, clocks...
  std::chrono::milliseconds counter_interval{1000};  // --telemetry-counter-interval MS: error counters
  double temp_limit_c = 85;                    // --temp-limit C
  bool fail_on_health = false;                 // --fail-on-health: exit code 4 when a check fails
  std::string record_path;                     // --telemetry-record FILE: save NVML's answers
  // --energy on|off|SECONDS: GPU energy per row over windows at least this long (telemetry/energy.h);
  // 0 = off.
  std::chrono::milliseconds energy_window{0};
};

// The options as typed, validated by finish_options.
struct RawOptions {
  std::string telemetry, interval = "100", counter_interval = "1000", temp_limit = "85", record, energy = "off";
  bool fail_on_health = false;
};

void add_options(CLI::App& run, RawOptions& raw);
// Throws Error(usage) saying what is wrong and what is valid.
Options finish_options(const RawOptions& raw);

}  // namespace ccbench::telemetry
