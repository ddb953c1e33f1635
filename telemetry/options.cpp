#include "telemetry/options.h"

#include <charconv>
#include <cmath>

#include <CLI/CLI.hpp>

#include "core/error.h"
#include "telemetry/energy.h"

namespace ccbench::telemetry {

namespace {
// Below 10 ms NVML's power figure does not change between samples (it is averaged over about
// a second on Hopper); above a minute a row would rarely hold a sample of its own.
constexpr long kMinIntervalMs = 10, kMaxIntervalMs = 60000;
// One read of the error counters asks NVML 4 questions per active NVLink link (18 per GPU on
// Hopper), each taking milliseconds: a full read takes longer than 100 ms on such a node, so a
// shorter wait would keep the counter thread reading without pause. Ten minutes still gives a
// long run several reads.
constexpr long kMinCounterIntervalMs = 100, kMaxCounterIntervalMs = 600000;

// A whole number of milliseconds from `min` to `max`, or Error(usage) naming `option`.
std::chrono::milliseconds parse_ms(const std::string& text, const char* option, long min, long max) {
  long ms = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc() || end != text.data() + text.size() || ms < min || ms > max)
    fail(ExitCode::usage, "{}: '{}' is not valid; expected milliseconds, a whole number from {} to {}", option, text,
         min, max);
  return std::chrono::milliseconds(ms);
}

// --energy: off, on (the shortest window) or the window in seconds, from the shortest to ten minutes.
std::chrono::milliseconds parse_energy(const std::string& text) {
  if (text == "off") return std::chrono::milliseconds(0);
  if (text == "on") return kMinEnergyWindow;
  double s = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), s);
  const double min_s = kMinEnergyWindow.count() / 1000.0;
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(s) || s < min_s || s > 600)
    fail(ExitCode::usage, "--energy: '{}' is not valid (valid: off, on (a {:g} s window), or the window in seconds "
         "from {:g} to 600: NVML's energy counter moves in ~{} ms steps, so shorter windows read mostly the step)",
         text, min_s, min_s, kEnergyCounterStep.count());
  return std::chrono::milliseconds(static_cast<long>(s * 1000));
}
}  // namespace

void add_options(CLI::App& run, RawOptions& raw) {
  run.add_option("--telemetry", raw.telemetry, "health telemetry (GPU temperature, power, clocks, error counters): on or off [on]");
  run.add_option("--telemetry-interval", raw.interval, "milliseconds between telemetry samples [100]");
  run.add_option("--telemetry-counter-interval", raw.counter_interval,
                 "milliseconds between reads of the error counters (NVLink, PCIe, ECC, XID, NIC) [1000]");
  run.add_option("--temp-limit", raw.temp_limit, "GPU temperature (C) that draws a warning and fails the health check [85]");
  run.add_flag("--fail-on-health", raw.fail_on_health,
               "exit code 4 when a GPU throttled (thermal or power), reached --temp-limit or an error counter grew");
  run.add_option("--telemetry-record", raw.record, "save every NVML answer to this JSON file (for playback in tests)");
  run.add_option("--energy", raw.energy,
                 "GPU energy per row (J per collective, GB per J) over repeated batches of at least this window: "
                 "off, on (1 s) or seconds [off]");
}

Options finish_options(const RawOptions& raw) {
  Options o;
  // On unless turned off: measured on 2 x H200, sampling kept busbw within 0.2 % at >= 64 MiB and
  // the 8 B time within 0.6 % (telemetry-overhead-*.log of h200x2-20261130-r6 for nccl and
  // h200x2-20261130-r7 for ring).
  if (raw.telemetry == "on" || raw.telemetry.empty()) o.enabled = true;
  else if (raw.telemetry == "off") o.enabled = false;
  else fail(ExitCode::usage, "--telemetry: unknown value '{}' (valid: on, off)", raw.telemetry);

  o.interval = parse_ms(raw.interval, "--telemetry-interval", kMinIntervalMs, kMaxIntervalMs);
  o.counter_interval =
      parse_ms(raw.counter_interval, "--telemetry-counter-interval", kMinCounterIntervalMs, kMaxCounterIntervalMs);

  double c = 0;
  auto [end2, ec2] = std::from_chars(raw.temp_limit.data(), raw.temp_limit.data() + raw.temp_limit.size(), c);
  if (ec2 != std::errc() || end2 != raw.temp_limit.data() + raw.temp_limit.size() || !std::isfinite(c) || c <= 0 || c > 150)
    fail(ExitCode::usage, "--temp-limit: '{}' is not valid; expected degrees Celsius above 0 and at most 150",
         raw.temp_limit);
  o.temp_limit_c = c;
  o.fail_on_health = raw.fail_on_health;
  if (!raw.record.empty() && !o.enabled)
    fail(ExitCode::usage, "--telemetry-record needs telemetry on (it was given with --telemetry off)");
  o.record_path = raw.record;
  o.energy_window = parse_energy(raw.energy);
  if (o.fail_on_health && !o.enabled)
    fail(ExitCode::usage, "--fail-on-health needs telemetry on (it was given with --telemetry off)");
  return o;
}

}  // namespace ccbench::telemetry
