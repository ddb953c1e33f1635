// `ccbench --version` and `ccbench list`.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectives/implementation.h"
#include "harness/app/app.h"
#include "harness/engine/context.h"
#include "core/transport_names.h"

namespace ccbench {

int print_version(int launcher_rank) {
  if (launcher_rank == 0) fmt::print("{}\n", version_text());
  return 0;
}

namespace {

// The support matrix (collectives/implementations.def) as this build has it: the collectives, the
// transports of each device (--transport on its ranks), the model's schedules, and every
// implementation with what it implements, needs and is predicted by.
nlohmann::ordered_json implementations_json() {
  nlohmann::ordered_json out;
  out["collectives"] = nlohmann::ordered_json::array();
  for (Collective c : kAllCollectives) out["collectives"].push_back(name(c));
  out["devices"] = {{name(Device::cpu), {{"transports", transport_names(kCpuRanks)}}},
                    {name(Device::gpu), {{"transports", transport_names(kGpuRanks)}}}};
  out["model_schedules"] = nlohmann::ordered_json::array();
  for (ModelSchedule s : all_model_schedules()) out["model_schedules"].push_back(name(s));
  out["implementations"] = nlohmann::ordered_json::array();
  for (const ImplInfo& i : implementations()) {
    nlohmann::ordered_json e = {{"name", i.name},
                                {"device", name(i.device)},
                                {"built_in", static_cast<bool>(i.make)},
                                {"by_default", i.by_default},
                                {"summary", i.make ? i.summary : i.missing},
                                {"needs", name(i.needs)}};
    e["model"] = nlohmann::ordered_json::array();
    for (ModelSchedule s : i.model) e["model"].push_back(name(s));
    // What an implementation implements is its own declaration: known where it is built in.
    e["collectives"] = nlohmann::ordered_json::array();
    if (i.make)
      for (Collective c : i.make()->collectives().list()) e["collectives"].push_back(name(c));
    out["implementations"].push_back(std::move(e));
  }
  return out;
}

}  // namespace

int print_implementations(int launcher_rank, bool json) {
  if (launcher_rank != 0) return 0;
  if (json) {
    fmt::print("{}\n", implementations_json().dump(2));
    return 0;
  }
  fmt::print("{:<10} {:<4} {:<13} {}\n", "name", "on", "this build", "what it is");
  for (const ImplInfo& i : implementations())
    fmt::print("{:<10} {:<4} {:<13} {}\n", i.name, name(i.device), i.make ? "built in" : "not built in",
               i.make ? i.summary : i.missing);
  return 0;
}

}  // namespace ccbench
