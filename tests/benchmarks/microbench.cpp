// Micro-benchmarks of the CPU side of a measurement:
//   - the reduce loops of the CPU executors (collectives/cpu/reduce_kernels.h) against memcpy,
//     in L1, L2, L3 and DRAM; bytes/s count every byte read plus every byte written;
//   - the CPU backend's pattern fill, poison and compare (harness/cpu_backend.cpp);
//   - the result sinks' cost per row (results/sink.h), with some rows already written.
// Run: build/ccbench_microbench [--benchmark_filter=REGEX] [--benchmark_repetitions=5
//      --benchmark_report_aggregates_only=true]
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include <benchmark/benchmark.h>

#include "collectives/cpu/reduce_kernels.h"
#include "collectives/numeric.h"
#include "harness/backend.h"
#include "results/sink.h"

namespace ccbench {
namespace {

constexpr std::int64_t KiB = 1024, MiB = 1024 * KiB;

// Page-aligned host memory as the CPU backend allocates it, filled with small non-zero values.
struct Buffer {
  explicit Buffer(std::size_t bytes) : bytes(bytes) {
    if (posix_memalign(&p, 4096, bytes) != 0) std::abort();
    auto* b = static_cast<std::uint8_t*>(p);
    for (std::size_t i = 0; i < bytes; ++i) b[i] = static_cast<std::uint8_t>(1 + i % 7);
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  std::byte* data() const { return static_cast<std::byte*>(p); }
  void* p = nullptr;
  std::size_t bytes;
};

// Values that stay small under repeated sums of two (a float never turns inf or subnormal).
template <typename T>
void fill_small(Buffer& b) {
  T* d = reinterpret_cast<T*>(b.data());
  const std::size_t n = b.bytes / sizeof(T);
  for (std::size_t i = 0; i < n; ++i) {
    const int v = static_cast<int>(i % 5) - 2;
    if constexpr (is_half_like<T>) d[i] = T::from_float(static_cast<float>(v));
    else d[i] = static_cast<T>(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Reduce loops. Args: bytes per buffer, inputs, outputs. dst[k] = src[0] + src[1] (+ src[2]).
// (2, 1) is a ring's recv_reduce_send, (2, 2) its recv_reduce_copy_send, (3, 1) a tree node's
// reduction of its input with two children.
// ---------------------------------------------------------------------------------------------
template <typename T>
void BM_Reduce(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const int nsrc = static_cast<int>(state.range(1)), ndst = static_cast<int>(state.range(2));
  const DataType type = std::is_same_v<T, float>    ? DataType::float32
                        : std::is_same_v<T, half_t> ? DataType::float16
                                                    : DataType::int8;
  std::vector<std::unique_ptr<Buffer>> bufs;
  const void* src[kMaxReduceSrc];
  void* dst[kMaxReduceDst];
  for (int k = 0; k < nsrc; ++k) {
    bufs.push_back(std::make_unique<Buffer>(bytes));
    fill_small<T>(*bufs.back());
    src[k] = bufs.back()->data();
  }
  for (int k = 0; k < ndst; ++k) {
    bufs.push_back(std::make_unique<Buffer>(bytes));
    dst[k] = bufs.back()->data();
  }
  const ReduceKernels kernels(type, ReduceOp::sum, 2);
  const std::size_t n = bytes / sizeof(T);
  for (auto _ : state) {
    kernels.reduce_multi(dst, ndst, src, nsrc, n, false);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * (nsrc + ndst) *
                          static_cast<std::int64_t>(bytes));
}

// STREAM-like copy (memcpy): bytes read + bytes written = 2 x size.
void BM_Memcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Buffer a(bytes), b(bytes);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 2 * static_cast<std::int64_t>(bytes));
}

// copy_multi to two outputs (a ring's recv_copy_send): one read, two writes.
void BM_CopyMulti2(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Buffer a(bytes), b(bytes), c(bytes);
  void* dst[2] = {b.data(), c.data()};
  for (auto _ : state) {
    copy_multi(dst, 2, a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 3 * static_cast<std::int64_t>(bytes));
}

// Buffer sizes: in L1 (48 KiB per core), L2 (1 MiB per core), L3 (32 MiB shared), DRAM.
void Sizes(benchmark::internal::Benchmark* b, std::vector<std::int64_t> shape) {
  for (std::int64_t s : {8 * KiB, 128 * KiB, 2 * MiB, 8 * MiB, 64 * MiB}) {
    std::vector<std::int64_t> args{s};
    args.insert(args.end(), shape.begin(), shape.end());
    b->Args(args);
  }
}

BENCHMARK(BM_Memcpy)->Apply([](auto* b) { Sizes(b, {}); })->ArgNames({"bytes"});
BENCHMARK(BM_Memcpy)->Arg(64 * MiB)->ArgNames({"bytes"})->Threads(2)->UseRealTime();
BENCHMARK(BM_CopyMulti2)->Apply([](auto* b) { Sizes(b, {}); })->ArgNames({"bytes"});
BENCHMARK(BM_Reduce<float>)->Apply([](auto* b) {
  Sizes(b, {2, 1});
  Sizes(b, {2, 2});
  Sizes(b, {3, 1});
})->ArgNames({"bytes", "in", "out"});
BENCHMARK(BM_Reduce<float>)->Args({64 * MiB, 2, 1})->ArgNames({"bytes", "in", "out"})->Threads(2)->UseRealTime();
BENCHMARK(BM_Reduce<half_t>)->Apply([](auto* b) { Sizes(b, {2, 1}); })->ArgNames({"bytes", "in", "out"});
BENCHMARK(BM_Reduce<std::int8_t>)->Apply([](auto* b) { Sizes(b, {2, 1}); })->ArgNames({"bytes", "in", "out"});

// ---------------------------------------------------------------------------------------------
// The CPU backend's pattern functions, as the runner calls them for an all-reduce of 2 ranks.
// Arg 0: data type (0 float, 1 half, 2 int8); arg 1: bytes. Bytes/s count bytes read + written.
// ---------------------------------------------------------------------------------------------
DataType type_arg(std::int64_t i) {
  return i == 0 ? DataType::float32 : i == 1 ? DataType::float16 : DataType::int8;
}

struct PatternCase {
  explicit PatternCase(const benchmark::State& state)
      : type(type_arg(state.range(0))), bytes(static_cast<std::size_t>(state.range(1))),
        n(bytes / element_size(type)), backend(make_cpu_backend()), a(bytes), b(bytes) {
    spec = PatternSpec{Collective::allreduce, type, ReduceOp::sum, 1, 0, 2, 0, n};
  }
  DataType type;
  std::size_t bytes, n;
  std::unique_ptr<Backend> backend;
  Buffer a, b;
  PatternSpec spec;
};

void PatternArgs(benchmark::internal::Benchmark* b) {
  for (std::int64_t t : {0, 1, 2})
    for (std::int64_t s : {1 * MiB, 64 * MiB}) b->Args({t, s});
  b->ArgNames({"type", "bytes"});
}

void BM_FillInput(benchmark::State& state) {
  PatternCase c(state);
  for (auto _ : state) {
    c.backend->fill_input(c.spec, c.a.data(), c.n, 0);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes));
}

void BM_FillExpected(benchmark::State& state) {
  PatternCase c(state);
  for (auto _ : state) {
    c.backend->fill_expected(c.spec, c.a.data(), c.n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes));
}

// The poison before every out-of-place iteration: recv = ~expected.
void BM_Complement(benchmark::State& state) {
  PatternCase c(state);
  for (auto _ : state) {
    c.backend->complement(c.b.data(), c.a.data(), c.bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * c.bytes));
}

// The check after every iteration: all elements right (the usual case, the whole loop runs).
void BM_Compare(benchmark::State& state) {
  PatternCase c(state);
  c.backend->fill_expected(c.spec, c.a.data(), c.n);
  std::memcpy(c.b.data(), c.a.data(), c.bytes);
  for (auto _ : state) {
    Mismatches m = c.backend->compare(c.spec, c.a.data(), c.b.data(), c.n);
    benchmark::DoNotOptimize(m.wrong);
    if (m.wrong) state.SkipWithError("compare found wrong elements in a copy of the expected output");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * c.bytes));
}

// The check that an out-of-place send buffer is untouched: regenerates the input and compares.
void BM_CheckInput(benchmark::State& state) {
  PatternCase c(state);
  c.backend->fill_input(c.spec, c.a.data(), c.n, 0);
  for (auto _ : state) {
    Mismatches m = c.backend->check_input(c.spec, c.a.data(), c.n, 0);
    benchmark::DoNotOptimize(m.wrong);
    if (m.wrong) state.SkipWithError("check_input found wrong elements in a freshly filled input");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes));
}

BENCHMARK(BM_FillInput)->Apply(PatternArgs);
BENCHMARK(BM_FillExpected)->Apply(PatternArgs);
BENCHMARK(BM_Complement)->Apply(PatternArgs);
BENCHMARK(BM_Compare)->Apply(PatternArgs);
BENCHMARK(BM_CheckInput)->Apply(PatternArgs);

// ---------------------------------------------------------------------------------------------
// Sinks: the cost of add() for one row when `rows` rows are already there (the JSON and
// Markdown files are rewritten whole after every row; the CSV appends one line). Files go to a
// temporary folder.
// ---------------------------------------------------------------------------------------------
class NullBuf : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

RunRecord sample_row(std::uint64_t i) {
  RunRecord r;
  r.collective = "allreduce";
  r.impl = "ring";
  r.transport = "shm";
  r.device = "cpu";
  r.dtype = "float";
  r.op = "sum";
  r.bytes = 1024ull << (i % 17);
  r.count = r.bytes / 4;
  r.in_place = i % 2;
  r.ranks = 2;
  r.ranks_per_node = 2;
  r.nodes = 1;
  r.warmup = 5;
  r.iterations = 20;
  r.time_avg_us = 123.456 + static_cast<double>(i);
  r.time_median_us = 120.5;
  r.time_min_us = 110.25;
  r.time_p95_us = 140.75;
  r.time_max_us = 150.125;
  r.time_cv = 0.0625;
  r.algbw_gbps = 8.5;
  r.busbw_gbps = 8.5;
  r.busbw_median_gbps = 8.7;
  return r;
}

// A context block of the size ccbench writes (a few dozen keys).
Json sample_context() {
  Json c;
  c["schema_version"] = kSchemaVersion;
  c["ccbench_version"] = "0.3.0";
  c["git_hash"] = "0123456789ab";
  c["command_line"] = Json::array({"ccbench", "--impl", "mpi,ring,tree", "-b", "1K", "-e", "64M"});
  c["hosts"] = Json::array({"node0"});
  c["mpi"] = "Open MPI v4.1.4";
  Json env = Json::object();
  for (int i = 0; i < 8; ++i) env["OMPI_MCA_var" + std::to_string(i)] = "value";
  c["environment"] = env;
  for (int i = 0; i < 20; ++i) c["key" + std::to_string(i)] = "a value of some length " + std::to_string(i);
  return c;
}

enum SinkKind { kCsv, kJson, kMarkdown, kTable };

template <SinkKind K>
void BM_SinkAdd(benchmark::State& state) {
  const auto before = static_cast<std::uint64_t>(state.range(0));
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("ccbench-microbench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  NullBuf null_buf;
  std::ostream null_out(&null_buf);
  std::unique_ptr<ResultSink> sink;
  switch (K) {
    case kCsv: sink = make_csv_sink((dir / "results.csv").string()); break;
    case kJson: sink = make_json_sink((dir / "run.json").string()); break;
    case kMarkdown: sink = make_markdown_sink((dir / "results.md").string()); break;
    case kTable: sink = make_table_sink(null_out); break;
  }
  sink->begin(sample_context());
  std::uint64_t i = 0;
  for (; i < before; ++i) sink->add(sample_row(i));
  for (auto _ : state) sink->add(sample_row(i++));
  sink->finish(RunOutcome{});
  sink.reset();
  std::filesystem::remove_all(dir);
}

// Rows added per measurement: at most 10% of those already there (at least 10), so that the
// rewritten files grow little while timed.
void SinkArgs(benchmark::internal::Benchmark* b) {
  b->ArgName("rows")->Unit(benchmark::kMicrosecond);
}
#define CCBENCH_SINK_BENCH(K)                                      \
  BENCHMARK(BM_SinkAdd<K>)->Apply(SinkArgs)->Arg(10)->Iterations(10); \
  BENCHMARK(BM_SinkAdd<K>)->Apply(SinkArgs)->Arg(200)->Iterations(20); \
  BENCHMARK(BM_SinkAdd<K>)->Apply(SinkArgs)->Arg(1000)->Iterations(100)
CCBENCH_SINK_BENCH(kCsv);
CCBENCH_SINK_BENCH(kJson);
CCBENCH_SINK_BENCH(kMarkdown);
CCBENCH_SINK_BENCH(kTable);

}  // namespace
}  // namespace ccbench

BENCHMARK_MAIN();
