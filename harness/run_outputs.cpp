#include "harness/run_outputs.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "core/error.h"
#include "results/compare.h"
#include "results/format.h"
#include "results/stragglers.h"

namespace ccbench {

bool wants_format(const RunOptions& opts, const char* format) {
  return std::find(opts.formats.begin(), opts.formats.end(), format) != opts.formats.end();
}

bool writes_files(const RunOptions& opts) {
  return !opts.no_files && (wants_format(opts, "csv") || wants_format(opts, "json") || wants_format(opts, "md"));
}

void check_outputs(const RunOptions& opts) {
  if (!opts.no_files) return;
  for (const std::string& f : opts.formats)
    if (f != "table")
      fail(ExitCode::usage,
           "--out none writes no files, but --format {} asks for one: drop --out none, or use --format table", f);
}

void prepare_json_file(const std::string& path) {
  if (path.empty()) return;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(ExitCode::usage, "-J/--output_file: '{}' is a folder", path);
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f) fail(ExitCode::usage, "-J/--output_file: cannot write '{}': {}", path, std::strerror(errno));
  std::fclose(f);
}

std::string results_written(const RunOptions& opts, const std::string& out_dir) {
  std::string files;
  for (const auto& [format, file] : {std::pair{"csv", "results.csv"}, {"json", "run.json"}, {"md", "results.md"}})
    if (wants_format(opts, format)) files += (files.empty() ? "" : ", ") + std::string(file);
  std::string s = opts.no_files ? "no results folder (--out none)"
                                : fmt::format("{}/ ({})", path_on_one_line(out_dir),
                                              files.empty() ? "no files: --format table" : files);
  if (!opts.json_file.empty()) s += fmt::format("; JSON also in {} (-J)", path_on_one_line(opts.json_file));
  return s;
}

ProgressPlan progress_plan(const RunOptions& opts, const SweepPlan& plan) {
  ProgressPlan p;
  p.collectives = opts.collectives;
  for (const ImplInfo* i : plan.impls) p.impls.push_back(i->name);
  p.dtypes = opts.dtypes.size();
  p.ops = opts.ops.size();
  p.sizes = plan.sizes.size();
  p.in_place = opts.in_place;
  p.cycles = opts.cycles;
  return p;
}

namespace {

// The writers --format asks for.
std::unique_ptr<FanoutSink> format_sinks(const RunOptions& opts, const std::string& dir,
                                         std::vector<std::string>& written) {
  auto fan = std::make_unique<FanoutSink>();
  fan->add_sink(wants_format(opts, "table") ? make_table_sink(std::cout) : make_footer_sink(std::cout));
  if (!writes_files(opts)) return fan;
  struct FileFormat {
    const char* format;
    const char* file;
    std::unique_ptr<ResultSink> (*make)(const std::string& path);
  };
  static const FileFormat kFileFormats[] = {{"csv", "results.csv", make_csv_sink},
                                            {"json", "run.json", make_json_sink},
                                            {"md", "results.md", make_markdown_sink}};
  for (const FileFormat& f : kFileFormats) {
    if (!wants_format(opts, f.format)) continue;
    fan->add_sink(f.make(dir + "/" + f.file));
    written.push_back(f.file);
  }
  return fan;
}

}  // namespace

std::unique_ptr<ResultSink> make_run_sinks(const RunOptions& opts, const SweepPlan& plan, const std::string& dir,
                                           std::vector<std::string>& written) {
  std::unique_ptr<FanoutSink> sinks = format_sinks(opts, dir, written);
  if (!opts.json_file.empty()) sinks->add_sink(make_json_sink(opts.json_file));
  if (opts.quiet) return sinks;
  ProgressSettings settings;
  settings.terminal = isatty(STDERR_FILENO) != 0;
  settings.interval = std::chrono::duration<double>(opts.progress_interval_s);
  return std::make_unique<ProgressSink>(std::move(sinks), progress_plan(opts, plan), settings);
}

void print_summary(const std::vector<RunRecord>& rows, const RunOptions& opts, const std::string& dir,
                   const std::vector<std::string>& written) {
  fmt::print("{}", straggler_report(rows, opts.straggler_threshold, opts.oversubscribed));
  fmt::print("{}", group_outlier_report(rows, opts.group_outlier_threshold, opts.oversubscribed));
  fmt::print("{}", pair_attribution_report(rows, opts.group_outlier_threshold));
  const std::string summary = comparison_table(rows, opts.baseline, false);
  if (!summary.empty()) fmt::print("#\n{}", summary);
  if (!written.empty()) {
    std::string list;
    for (const std::string& f : written) list += (list.empty() ? "" : ", ") + f;
    fmt::print("# results: {}/ ({})\n", path_on_one_line(dir), list);
  }
  std::fflush(stdout);
}

}  // namespace ccbench
