#pragma once
// The run record: one row per measurement, and the columns every writer and reader shares.
// results/ depends on nothing else of ccbench and has no CUDA.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/health.h"

namespace ccbench {

using Json = nlohmann::ordered_json;

// Version of the layout of results.csv and run.json; raise it when a column changes meaning.
// Version 2 added `algorithm`; version-1 files are still read (the column is then empty).
// Version 3 writes an unchecked row's `wrong` as empty (null in JSON) instead of -1 (the -1 of
// older files is still read as not checked) and adds the health columns (results/health.h),
// optional and empty where not read, and later the per-rank and group columns (host,
// slowest_rank, slowest_host, rank_spread, straggler_ratio, group_outlier_ratio, rank_times,
// rank_median, culprit), optional too, and the columns of what a row is judged against (link_ceiling,
// efficiency, predicted_time, predicted_busbw, model_efficiency, model_link, model_reason),
// optional and empty where the run had no ceilings or no model, and the training columns
// (nccl_config, load, load_unit, load_alone, load_during, load_alone_end) and the energy columns
// of the health block (energy_window), optional and empty where not used.
// Version 4 adds `cycle`: which sweep of a repeated run (-N/--cycles) measured the row, so that a
// key measured N times is N rows told apart. Older files lack the column; readers number a key's
// repeated rows by their order in the file (what -N wrote), see number_cycles().
inline constexpr int kSchemaVersion = 4;
// The schema versions this build reads; a file of any other is refused, naming them.
inline constexpr int kOldestSchemaVersion = 1;

// The CSV headers of the judged-against columns that acceptance rules read (results/accept.h).
inline constexpr const char* kLinkCeilingHeader = "link_ceiling[GB/s]";
inline constexpr const char* kPredictedBusbwHeader = "predicted_busbw[GB/s]";

enum class RowStatus { ok, wrong, skipped, failed };
std::string_view row_status_name(RowStatus s);
RowStatus parse_row_status(std::string_view s);  // throws Error(usage) on an unknown name

struct RunRecord {
  // What was measured.
  std::string collective;   // allreduce, allgather, ...
  std::string impl;         // nccl, ring, tree, mpi, ...
  std::string transport;    // shm, mpi, p2p, host, net/tcp, p2p+net/tcp, nccl:SHM, ... (core/transport_names.h,
                            // transports/labels.h)
  std::string algorithm;    // what the impl chose at this size ("RING/LL 2ch", "oneshot"); "" if not known
  std::string device;       // cpu or gpu
  std::string dtype;        // float, half, ...
  std::string op;           // sum, prod, min, max, avg; "none" for data movement only
  int root = -1;            // broadcast/reduce root, -1 otherwise
  std::uint64_t bytes = 0;  // the algbw size S (all-gather: total output bytes, as nccl-tests)
  std::uint64_t count = 0;  // elements per rank in the input (all-gather: per rank piece)
  bool in_place = false;
  std::string mode = "eager";  // eager, or graph (CUDA-graph replay)
  int ranks = 0;
  int ranks_per_node = 0;
  int nodes = 0;
  std::string group = "world";  // which ranks took part
  int cycle = 1;                // which sweep of -N/--cycles measured it, from 1
  // The link a row of two ranks measured (--groups pairs, a 2-rank run, a row of links.csv), named
  // by results/links.h link_name(); "" for rows of more ranks.
  std::string link;
  int warmup = 0;
  int iterations = 0;

  // Timing: batch average (nccl-tests-comparable) and the per-iteration distribution, each
  // iteration's time being the slowest rank's. Microseconds.
  double time_avg_us = 0;
  double time_median_us = 0;
  double time_min_us = 0;
  double time_p95_us = 0;
  double time_max_us = 0;
  double time_cv = 0;            // standard deviation / mean of the per-iteration times
  double algbw_gbps = 0;         // bytes / time_avg, GB/s (1e9)
  double busbw_gbps = 0;         // algbw * collective's bus factor
  double busbw_median_gbps = 0;  // the same from the median iteration

  // Correctness. `wrong`: wrong elements over all ranks and checked iterations, plus damaged
  // guard bytes; empty when the data was not checked (-c 0, a skipped or failed row, in-place
  // CUDA-graph replays of an op whose repetition changes the data). Never summed when empty:
  // CSV writes it as an empty field, JSON as null, the table as N/A (as nccl-tests).
  std::optional<std::int64_t> wrong;
  RowStatus status = RowStatus::ok;
  std::string reason;  // why skipped or failed; the first wrong element when wrong

  // Per-rank times (results/stragglers.h): empty where the row measured nothing.
  std::string host;                       // the host of every rank of the row, when they share one
  std::vector<double> rank_times_us;      // each rank's own batch average, rank order (of the group)
  std::vector<double> rank_median_us;     // each rank's own median single-iteration time
  std::optional<int> slowest_rank;        // the rank with the longest median time
  std::string slowest_host;               // its host
  std::optional<double> rank_spread;      // slowest / median rank time - 1
  std::optional<double> straggler_ratio;  // slowest / median rank time
  // Sub-group runs: this group's busbw below the median of like groups, as median / this group's
  // busbw (1 for the median group); empty for world rows.
  std::optional<double> group_outlier_ratio;
  // --groups pairs: where the slowness of this row's link is put (results/stragglers.h
  // mark_pair_culprits: the culprit endpoint, "link" for the link itself, "ambiguous"); empty
  // where the row is not slow or not judged (sizes below the largest).
  std::string culprit;

  // What the row is judged against, filled before it reaches a writer; empty (null) where the
  // run had nothing to judge it by or the row measured nothing (status other than ok).
  // The measured ceiling of the row's path (--ceilings, --measure-ceilings; results/links.h):
  // GB/s per direction with both directions busy, and busbw / that ceiling.
  std::optional<double> link_ceiling_gbps;
  std::optional<double> efficiency;
  // The performance model's prediction for the row (--model; harness/model/run_model.h): its
  // time and busbw, measured busbw / predicted busbw, the ranks' link it was predicted with
  // (across nodes: the NIC) and where that figure came from ("measured ceiling", "topology
  // file"; "" without a prediction), and why there is no prediction ("" when there is one, or
  // when the run has no model).
  std::optional<double> predicted_time_us;
  std::optional<double> predicted_busbw_gbps;
  std::optional<double> model_efficiency;
  std::optional<double> model_link_gbps;
  std::string model_link;
  std::string model_reason;

  // Training conditions, "" / empty where the run had none. nccl_config: the NCCL communicator's
  // settings (--nccl-config: "maxCTAs=4;NCCL_ALGO=Ring"), part of what the row measured. load:
  // the compute load that ran beside the collective on every GPU (--overlap: "gemm bf16
  // 8192x8192x8192", "membw 1G"), its throughput alone before the rows, while the collective's
  // timed batch ran, and alone again after the rows (a GPU as warm as the rows left it; set when
  // the run ends), in load_unit (TFLOPS, GB/s), each per GPU: the sum over the ranks sharing a
  // GPU, the mean over the GPUs.
  std::string nccl_config;
  std::string load;
  std::string load_unit;
  std::optional<double> load_alone;
  std::optional<double> load_during;
  std::optional<double> load_alone_end;

  // Hardware health while this size was measured (telemetry/); empty figures where not read.
  RowHealth health;
};

// Whether the row holds figures: ok or wrong (a wrong row was timed, its check failed).
bool row_measured(const RunRecord& r);

// obj[key] when it is a string, else "" (run.json fields written by other versions).
std::string json_text(const Json& obj, const char* key);

// Column descriptor: the JSON key and the CSV header (units in brackets). An optional column
// was added after schema version 1: older files lack it, and reading leaves its default.
struct Column {
  const char* key;
  const char* csv_header;
  bool optional = false;
};
const std::vector<Column>& record_columns();

Json to_json(const RunRecord& r);  // keys in record_columns() order
// Throws Error(usage) on a missing or bad field. A `wrong` of -1 (how files before the empty
// field marked an unchecked row) is read as not checked.
RunRecord record_from_json(const Json& j);
std::vector<std::string> to_csv_fields(const RunRecord& r);  // one string per column
// Rows of a file without the cycle column (schema before 4): the k-th row of a measurement
// (results/row_key.h: every field that names its case and size but the cycle, and its host and
// link, so that the rows of two nodes in one file are not taken for repeats) gets cycle k, as a
// repeated run wrote them in order.
void number_cycles(std::vector<RunRecord>& rows);
// A file's schema_version, checked: throws Error(usage) naming `where` and the versions this
// build reads (kOldestSchemaVersion to kSchemaVersion) when it is another.
void check_schema_version(long long version, const std::string& where);
// Parses one CSV row given as header -> value; throws Error(usage) naming the bad column.
RunRecord record_from_csv(const std::vector<std::string>& header, const std::vector<std::string>& fields);

}  // namespace ccbench
