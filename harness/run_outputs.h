#pragma once
// What `ccbench run` writes on rank 0: the files --format and --out ask for, checked before MPI;
// their writers, with the -J copy beside them and the progress line in front; and the lines after
// the table.
#include <memory>
#include <string>
#include <vector>

#include "harness/engine/options.h"
#include "harness/progress.h"
#include "harness/engine/runner.h"
#include "results/sink.h"

namespace ccbench {

// Whether --format asks for `format` (table, csv, json, md).
bool wants_format(const RunOptions& opts, const char* format);
// Whether a results folder is needed: files not turned off, and a file format asked for.
bool writes_files(const RunOptions& opts);
// Throws Error(usage) when --out none comes with a --format that writes a file.
void check_outputs(const RunOptions& opts);
// -J FILE: proves the file writable (the JSON writer writes it from the start); Error(usage).
void prepare_json_file(const std::string& path);

// The files the run writes, for the start-up block ("DIR/ (results.csv, run.json); JSON also in F (-J)").
std::string results_written(const RunOptions& opts, const std::string& out_dir);
// What the progress line counts.
ProgressPlan progress_plan(const RunOptions& opts, const SweepPlan& plan);

// The writers --format asks for, in `dir`, with the -J copy beside them and the progress line on
// stderr in front of them all (unless --quiet); `written` gets the names of the files in `dir`.
// Without the table its footer alone still ends the run with the verdict on stdout.
std::unique_ptr<ResultSink> make_run_sinks(const RunOptions& opts, const SweepPlan& plan, const std::string& dir,
                                           std::vector<std::string>& written);

// After the footer: stragglers, group outliers, the implementations side by side with the
// table's figure, and where the files are.
void print_summary(const std::vector<RunRecord>& rows, const RunOptions& opts, const std::string& dir,
                   const std::vector<std::string>& written);

}  // namespace ccbench
