// ccbench_store_bench: how long the results store takes for what a fleet asks of it, on either
// kind (results/store.h): adding one run of 10,000 rows (one transaction), and reading one
// case's trend over 1,000 runs. Prints one JSON object per measurement (seconds), every repeat.
// Evidence, not a test: tests/benchmarks/store_bench.py runs it on both stores.
//
// Usage: ccbench_store_bench DB RESULTS_CSV [--rows N] [--runs N] [--repeat N]
//   DB           an SQLite path or a PostgreSQL URL of an empty database
//   RESULTS_CSV  a real run's results.csv whose rows are repeated (other sizes) to make the runs
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "results/csv_reader.h"
#include "results/history.h"

namespace {

using namespace ccbench;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
// This process's CPU time (user and system), seconds: what a loaded machine's wall time hides.
double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

Json context_of(const std::string& host, int n) {
  return Json{{"started_utc", fmt::format("2026-12-02T{:02}:{:02}:{:02}Z", n / 3600 % 24, n / 60 % 60, n % 60)},
              {"git_hash", "bench"}, {"device", "cpu"}, {"ranks_per_node", 2}, {"command_line", "ccbench bench"},
              {"ranks_detail", Json::array({{{"rank", 0}, {"host", host}}})}};
}

// `count` rows made of the model rows, each copy at its own size so that no two share a case and size.
std::vector<RunRecord> rows_like(const std::vector<RunRecord>& model, size_t count) {
  std::vector<RunRecord> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    RunRecord r = model[i % model.size()];
    r.bytes += i / model.size();  // sizes stay within a byte of the model's: the figures stay sound
    out.push_back(r);
  }
  return out;
}

int run(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: ccbench_store_bench DB RESULTS_CSV [--rows N] [--runs N] [--repeat N]\n");
    return 2;
  }
  const std::string db = argv[1];
  size_t rows = 10000, runs = 1000;
  int repeat = 5;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long v = std::atol(argv[i + 1]);
    if (flag == "--rows") rows = static_cast<size_t>(v);
    else if (flag == "--runs") runs = static_cast<size_t>(v);
    else if (flag == "--repeat") repeat = static_cast<int>(v);
  }
  const std::vector<RunRecord> model = read_result_set(argv[2]).rows;
  const std::string kind = is_store_url(db) ? "postgresql" : "sqlite";
  History h(db);
  // A fleet's history: `runs` runs of the model's rows (a few hundred each), made by the first
  // call; later calls add to it.
  int n = static_cast<int>(h.runs().size());
  if (n == 0) {
    const auto fill0 = Clock::now();
    for (size_t i = 0; i < runs; ++i) h.append(context_of(fmt::format("node{:03}", i % 64), n++), model, "OK", 0);
    fmt::print("{{\"store\": \"{}\", \"what\": \"fill\", \"runs\": {}, \"rows_each\": {}, \"seconds\": {:.3f}}}\n",
               kind, runs, model.size(), since(fill0));
  }
  const std::vector<RunRecord> big = rows_like(model, rows);
  CaseFilter f;
  f.collective = model.front().collective;
  f.impl = model.front().impl;
  f.transport = model.front().transport;
  f.dtype = model.front().dtype;
  f.bytes = model.front().bytes;
  for (int k = 0; k < repeat; ++k) {
    const auto t0 = Clock::now();
    const double c0 = cpu_now();
    h.append(context_of("big", n++), big, "OK", 0);
    fmt::print("{{\"store\": \"{}\", \"what\": \"append\", \"rows\": {}, \"seconds\": {:.4f}, \"cpu_seconds\": {:.4f}}}\n",
               kind, rows, since(t0), cpu_now() - c0);
    const auto t1 = Clock::now();
    const double c1 = cpu_now();
    const size_t points = h.trend(f).size();
    const double wall = since(t1), cpu = cpu_now() - c1;
    fmt::print("{{\"store\": \"{}\", \"what\": \"trend\", \"runs\": {}, \"points\": {}, \"seconds\": {:.4f}, "
               "\"cpu_seconds\": {:.4f}}}\n", kind, h.runs().size(), points, wall, cpu);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const ccbench::Error& e) {
    fmt::print(stderr, "ccbench_store_bench: {}\n", e.what());
    return static_cast<int>(e.code());
  }
}
