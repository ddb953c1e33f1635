// `ccbench --version` and `ccbench list`.
#include <fmt/format.h>

#include "collectives/implementation.h"
#include "harness/app/app.h"
#include "harness/context.h"

namespace ccbench {

int print_version(int launcher_rank) {
  if (launcher_rank == 0) fmt::print("{}\n", version_text());
  return 0;
}

int print_implementations(int launcher_rank) {
  if (launcher_rank != 0) return 0;
  fmt::print("{:<10} {:<4} {:<13} {}\n", "name", "on", "this build", "what it is");
  for (const ImplInfo& i : implementations())
    fmt::print("{:<10} {:<4} {:<13} {}\n", i.name, name(i.device), i.make ? "built in" : "not built in",
               i.make ? i.summary : i.missing);
  return 0;
}

}  // namespace ccbench
