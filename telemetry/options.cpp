#include "telemetry/options.h"

#include <charconv>
#include <cmath>

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
// Above any GPU's shutdown temperature: a larger limit is a typo.
constexpr double kMaxTempLimitC = 150;

// Milliseconds from lo to hi, bound to `target`.
void add_ms(cli::OptionSet& set, const cli::Spec& spec, std::chrono::milliseconds& target, long lo, long hi) {
  const std::string label = cli::flag_label(spec.names);
  set.value(spec, "MS", fmt::format("{} to {}", lo, hi), std::to_string(target.count()),
            [&target, label, lo, hi](const std::string& v) {
              target = std::chrono::milliseconds(cli::parse_whole_number(v, label, lo, hi, "milliseconds"));
            });
}

// The longest --energy window: ten minutes per row is already a long acceptance run.
constexpr double kMaxEnergyWindowS = 600;

// --energy: off, on (the shortest window) or the window in seconds.
std::chrono::milliseconds parse_energy(const std::string& text) {
  if (text == "off") return std::chrono::milliseconds(0);
  if (text == "on") return kMinEnergyWindow;
  double s = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), s);
  const double min_s = kMinEnergyWindow.count() / 1000.0;
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(s) || s < min_s || s > kMaxEnergyWindowS)
    fail(ExitCode::usage,
         "--energy: '{}' is not valid (valid: off, on (a {:g} s window), or the window in seconds "
         "from {:g} to {:g}: NVML's energy counter moves in ~{} ms steps, so shorter windows read mostly the step)",
         text, min_s, min_s, kMaxEnergyWindowS, kEnergyCounterStep.count());
  return std::chrono::milliseconds(static_cast<long>(s * 1000));
}
}  // namespace

void add_options(cli::OptionSet& run, Options& o) {
  run.group("Health telemetry");
  // On unless turned off: measured on 2 x H200, sampling kept busbw within 0.2 % at >= 64 MiB and
  // the 8 B time within 0.6 % (h200x2-20261130-r6 for nccl and h200x2-20261130-r7 for ring).
  run.choice({"--telemetry", "health telemetry: GPU temperature, power, clocks, error counters"}, o.enabled,
             cli::Names<bool>{{{"on", true}, {"off", false}}, nullptr});
  add_ms(run, {"--telemetry-interval", "milliseconds between telemetry samples"}, o.interval, kMinIntervalMs,
         kMaxIntervalMs);
  add_ms(run,
         {"--telemetry-counter-interval",
          "milliseconds between reads of the error counters (NVLink, PCIe, ECC, "
          "XID, NIC)"},
         o.counter_interval, kMinCounterIntervalMs, kMaxCounterIntervalMs);
  run.number({"--temp-limit", "GPU temperature that draws a warning and fails the health check"}, o.temp_limit_c,
             {.lo = 0, .hi = kMaxTempLimitC, .what = "degrees Celsius", .lo_open = true}, "CELSIUS");
  run.flag({"--fail-on-health",
            "exit code 4 when a GPU throttled (thermal or power), reached --temp-limit or an "
            "error counter grew"},
           o.fail_on_health);
  run.text({"--telemetry-record", "save every NVML answer to this JSON file (for playback in tests)"}, o.record_path,
           "FILE");
  run.value({"--energy",
             "GPU energy per row (J per collective, GB per J) over repeated batches of at least this "
             "window, summed over the job's GPUs"},
            "SECONDS",
            fmt::format("off, on ({:g} s) or seconds from {:g} to {:g}", kMinEnergyWindow.count() / 1000.0,
                        kMinEnergyWindow.count() / 1000.0, kMaxEnergyWindowS),
            "off", [&o](const std::string& v) { o.energy_window = parse_energy(v); });
  run.group("");
}

void check_options(const Options& o) {
  if (!o.record_path.empty() && !o.enabled)
    fail(ExitCode::usage, "--telemetry-record needs telemetry on (it was given with --telemetry off)");
  if (o.fail_on_health && !o.enabled)
    fail(ExitCode::usage, "--fail-on-health needs telemetry on (it was given with --telemetry off)");
}

}  // namespace ccbench::telemetry
