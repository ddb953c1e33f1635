#pragma once
// The options several subcommands share, each declared once here (core/cli_options.h), so that
// a flag means the same in every subcommand: the size sweep (-b -e -f), -n/-w, --device,
// -T/--timeout (0 = a week everywhere), --out (a results folder, or none), --transport (the
// table of core/transport_names.h), --db, and the RDMA and libfabric flags of run and links.
// Subcommands bind them to their own variables, whose values are the defaults shown.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/types.h"
#include "core/cli_options.h"
#include "harness/engine/options.h"
#include "transports/ib/ib_logic.h"
#include "core/transport_names.h"
#include "transports/ofi/ofi_logic.h"

namespace ccbench {

// The longest --timeout, and what 0 stands for: a week (nccl-tests' -T 0 means no timeout).
inline constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600.0;
inline constexpr double kMinTimeoutSeconds = 0.001;  // below 1 ms would become 0 ms

// -b/--minbytes, -e/--maxbytes (max_default: the default in words) and -f/--stepfactor.
void add_min_bytes(cli::OptionSet& set, std::uint64_t& target);
void add_max_bytes(cli::OptionSet& set, std::uint64_t& target, const std::string& max_default);
void add_step_factor(cli::OptionSet& set, double& target);
// -n/--iters and -w/--warmup_iters.
void add_iterations(cli::OptionSet& set, int& iters, int& warmup);
// --device auto|cpu|gpu.
void add_device(cli::OptionSet& set, DeviceChoice& target);
// -T/--timeout SECONDS: how long one phase (a set-up step, a wait for a peer, a measurement) may
// take before the run ends with exit code 5; 0 = a week.
void add_timeout(cli::OptionSet& set, std::chrono::milliseconds& target);
// --out FOLDER|none: the results folder (created; "" in `target` = a new timestamped one).
void add_out(cli::OptionSet& set, std::string& target);
// --overwrite: results of an earlier run in --out are replaced rather than refused.
void add_overwrite(cli::OptionSet& set, bool& target);
// --transport: run's one transport (a name of core/transport_names.h, stored by its canonical name).
void add_run_transport(cli::OptionSet& set, std::string& target);
// --transport: the link modes of `ccbench links`, comma-separated.
void add_links_transports(cli::OptionSet& set, std::vector<Transport>& target);
// --db FILE: a SQLite history; `help` says what the subcommand does with it.
void add_db(cli::OptionSet& set, std::string& target, const std::string& help);
// --metrics FILE.prom (run, accept, export): checked when given (results/metrics.h).
void add_metrics(cli::OptionSet& set, std::string& target, const std::string& help);
inline constexpr const char* kMetricsHelp =
    "also write the results as Prometheus metrics to FILE.prom (replaced atomically) for node_exporter's textfile "
    "collector";
// --db FILE, else CCBENCH_DB, else "" (no history).
std::string history_path(const std::string& given);

// The vocabularies of what is measured, for choices and lists.
cli::Names<Collective> collective_names();
cli::Names<DataType> data_type_names();
cli::Names<ReduceOp> reduce_op_names();

// The RDMA (ib) flags `run` and `links` share: --ib-dev, --gid-index, --ib-qps, --ib-chunk,
// --ib-mtu, --ib-tc, --ib-sl, and for `run` --gpudirect (GPU ranks' FIFOs in GPU memory).
void add_ib_options(cli::OptionSet& set, IbOptions& target, bool with_gpudirect);
// The libfabric (ofi) flags `run` and `links` share: --ofi-provider, --ofi-domain, --ofi-protocol.
// Whether a named provider or domain exists is known only where libfabric runs, at start-up;
// `target.hmem` follows --gpudirect, set by the command.
void add_ofi_options(cli::OptionSet& set, OfiOptions& target);

}  // namespace ccbench
