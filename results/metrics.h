#pragma once
// Results as metrics for the monitoring stack operators already run: the Prometheus text format
// (0.0.4) that node_exporter's textfile collector serves as it is and promtool checks, ending in
// OpenMetrics' "# EOF" (so an OpenMetrics parser takes it too). Every family is a gauge; no
// sample carries a timestamp (the textfile collector refuses those): times are gauges of their
// own (*_timestamp_seconds).
//
// What a file holds (units in the names, base units: bytes per second, seconds):
//   ccbench_busbw_bytes_per_second, ccbench_latency_seconds   per case and size, ok rows only:
//       busbw as nccl-tests (batch average) and the median iteration's time, the figures
//       `accept`'s min_busbw and max_latency_us judge. Labels: collective, impl, transport,
//       dtype, op, placement, mode, size (bytes), host, link, group. Rows that share every label
//       (the cycles of -N, roots, --nccl-config settings, loads) give one sample: the worst
//       (lowest busbw, longest time), what an alert on a rule must see.
//   ccbench_run_info (1), ccbench_run_start_timestamp_seconds, ccbench_run_exit_code,
//       ccbench_run_rows{status}   per run: labels host (its first rank's) and source (results
//       or links); info adds version, git_hash, device, kind, ranks, nodes.
//   ccbench_gpu_temperature_max_celsius, ccbench_gpu_throttled, ccbench_gpu_throttle_reason
//       {reason}, ccbench_hardware_error_growth{counter}   health per host, from the rows'
//       telemetry; absent where it was not read (unknown is not zero).
//   ccbench_accept_passed, ccbench_accept_rule_passed{rule, where}, ccbench_accept_check_passed
//       {rule, where, check}, ccbench_accept_node_passed{host}, ccbench_accept_node_failed_rows,
//       ccbench_accept_link_passed{link}, ccbench_accept_link_failed_rows   verdicts, when
//       rules were judged: 1 pass, 0 fail, as `accept` prints them; a check, node or link that
//       was not available is absent.
//   ccbench_metrics_timestamp_seconds, ccbench_metrics_rows_left_out   the file itself.
//
// Bounded cardinality: every label but size, host, link and group takes its values from
// ccbench's own name tables (10 collectives, a few dozen implementations and transports, 12
// dtypes, 6 ops, 2 placements, 2 modes); host from the nodes of the run; link and group from
// its ranks (pairs at most ranks^2). Sizes: at most kMaxSizesPerCase per case (a -b/-e/-f sweep
// has fewer: 1 B to 8 EiB is 64 powers of two); a case with more (a linear -i sweep) keeps its
// powers of two and its largest size, and ccbench_metrics_rows_left_out counts the rest. Rows of
// links.csv keep their largest size only (the figure of the link matrix). No label holds a time,
// a command line or a run id: a file rewritten by every run keeps one series per case and host.
#include <string>
#include <vector>

#include "results/accept.h"
#include "results/csv_reader.h"

namespace ccbench {

inline constexpr size_t kMaxSizesPerCase = 64;

// The metrics of `runs` (results.csv or links.csv rows with their run.json), and of the
// acceptance verdicts over them when `verdicts` is given; the file's own timestamp is now. Runs
// are read as read_results_or_links gives them; a run's exit code is its run.json's (absent when
// not known).
std::string metrics_text(const std::vector<ResultSet>& runs, const AcceptReport* verdicts = nullptr);

// Checks a --metrics FILE before anything runs: node_exporter's textfile collector reads files
// ending in ".prom" only, and the file is written through a temporary file in its folder, which
// must exist. Throws Error(usage) saying what is wrong.
void check_metrics_path(const std::string& path);
// Writes `text` to `path` atomically: a temporary file in the same folder, then rename(), so a
// scrape never sees half a file. Throws Error naming the path and the system's reason
// (write_error_code(): 2 for a path that cannot be written, 6 for a failing disk).
void write_metrics_file(const std::string& path, const std::string& text);

}  // namespace ccbench
