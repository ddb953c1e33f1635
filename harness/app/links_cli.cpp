#include "harness/app/links_cli.h"

#include <algorithm>

#include "core/error.h"
#include "harness/engine/fault.h"
#include "harness/app/shared_options.h"
#include "harness/engine/sizes.h"

namespace ccbench {

LinksCommand::LinksCommand(CLI::App& app)
    : sub_(app.add_subcommand("links", "measure every pair of ranks: bandwidth one way and both ways, latency")),
      set_(*sub_) {
  add_links_transports(set_, o_.transports);
  add_min_bytes(set_, o_.min_bytes);
  add_max_bytes(set_, o_.max_bytes, "CPU 64M, GPU 256M");
  add_step_factor(set_, o_.factor);
  add_iterations(set_, o_.iterations, o_.warmup);
  set_.number({"--outlier-threshold", "flag pairs below this fraction of the median of their transport"},
              o_.outlier_threshold, {.lo = 0, .hi = 1, .what = "a fraction"}, "FRACTION");
  set_.flag({"--all-at-once", "also measure every pair at the same time (CPU ranks)"}, o_.all_at_once);
  set_.flag({"--serial",
             "measure one pair at a time even across nodes, for a fabric where pairs on disjoint nodes "
             "would contend (oversubscribed); by default pairs on disjoint nodes run together in rounds"},
            o_.serial);
  add_device(set_, o_.device);
  add_out(set_, out_);
  add_overwrite(set_, o_.overwrite);
  add_timeout(set_, o_.timeout);
  add_ib_options(set_, o_.ib, false);
  add_ofi_options(set_, o_.ofi);
}

LinksOptions LinksCommand::finish(const std::string& command_line) {
  o_.command_line = command_line;
  // The sweep is checked now, before MPI; without -e against the larger default (GPU ranks').
  SweepSpec probe{o_.min_bytes, o_.max_bytes ? o_.max_bytes : std::max<std::uint64_t>(o_.min_bytes, 256ull << 20),
                  o_.factor, 0};
  sweep_sizes(probe);
  o_.no_files = out_ == "none";
  if (!o_.no_files) o_.out_dir = out_;
  validate_ib_options(o_.ib);
  o_.fault = fault_from_environment();
  if (o_.fault && o_.fault->kind != FaultSpec::Kind::slow)
    fail(ExitCode::usage,
         "CCBENCH_FAULT: `ccbench links` injects only slow (slow:rank=R,ms=M[,size=S]: rank R late by "
         "M ms with every message); the other kinds act on collectives (`ccbench run`)");
  return o_;
}

}  // namespace ccbench
