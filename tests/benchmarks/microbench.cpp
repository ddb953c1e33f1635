// Micro-benchmarks of the CPU side of a measurement:
//   - the reduce loops of the CPU executors (collectives/cpu/reduce_kernels.h) against memcpy
//     and two candidate loops (float16 through F16C, float with streaming stores), in L1, L2, L3
//     and DRAM; bytes/s count every byte read plus every byte written; half, bfloat16 and fp8
//     against float at the same byte sizes, fp8's sum, prod, min and max on each vector set
//     (scripts/narrow-reduce-bench.sh alternates and repeats them);
//   - two cores handing a cache line and a stream of slots to each other (the ceiling of the
//     CPU channels);
//   - the CPU backend's pattern fill, poison and compare (harness/engine/cpu_backend.cpp);
//   - the harness's own cost per timed call of the `mpi` implementation;
//   - the result sinks' cost per row (results/sink.h), with some rows already written.
// Run: build/ccbench_microbench [--benchmark_filter=REGEX] [--benchmark_repetitions=5
//      --benchmark_report_aggregates_only=true]
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <benchmark/benchmark.h>
#include <mpi.h>

#include "collectives/cpu/cpu_impls.h"
#include "collectives/cpu/cpu_vectors.h"
#include "collectives/cpu/reduce_kernels.h"
#include "collectives/implementation.h"
#include "collectives/numeric.h"
#include "harness/engine/backend.h"
#include "results/sink.h"
#include "tests/support/record_builder.h"

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

// Small integer values (-2..2): exact in every type, never all zero.
template <typename T>
void fill_small(Buffer& b) {
  T* d = reinterpret_cast<T*>(b.data());
  const std::size_t n = b.bytes / sizeof(T);
  for (std::size_t i = 0; i < n; ++i) {
    const int v = static_cast<int>(i % 5) - 2;
    if constexpr (is_narrow_float<T>) d[i] = T::from_float(static_cast<float>(v));
    else d[i] = static_cast<T>(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Reduce loops. Args: bytes per buffer, inputs, outputs. dst[k] = src[0] + src[1] (+ src[2]).
// (2, 1) is a ring's recv_reduce_send, (2, 2) its recv_reduce_copy_send, (3, 1) a tree node's
// reduction of its input with two children.
// ---------------------------------------------------------------------------------------------
template <typename T>
DataType type_of() {
  return std::is_same_v<T, float>        ? DataType::float32
         : std::is_same_v<T, half_t>     ? DataType::float16
         : std::is_same_v<T, bfloat16_t> ? DataType::bfloat16
         : std::is_same_v<T, fp8_e4m3_t> ? DataType::f8e4m3
         : std::is_same_v<T, fp8_e5m2_t> ? DataType::f8e5m2
                                         : DataType::int8;
}

template <typename T>
void BM_Reduce(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const int nsrc = static_cast<int>(state.range(1)), ndst = static_cast<int>(state.range(2));
  const DataType type = type_of<T>();
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

// One ring step (two inputs, one output) of any operation on one vector set: args bytes per
// buffer, the operation (index into kAllReduceOps) and the vector set (index into
// kAllVectorIsas; ReduceKernels uses the widest available at or below it). fp8 against float
// for min and max, and each set's fp8 loops against the others (scripts/narrow-reduce-bench.sh).
// The label names the set.
template <typename T>
void BM_ReduceOp(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const ReduceOp op = kAllReduceOps[state.range(1)];
  const VectorIsa isa = kAllVectorIsas[state.range(2)];
  Buffer a(bytes), b(bytes), d(bytes);
  fill_small<T>(a);
  fill_small<T>(b);
  const ReduceKernels kernels(type_of<T>(), op, 2, isa);
  const std::size_t n = bytes / sizeof(T);
  for (auto _ : state) {
    kernels.reduce(d.data(), a.data(), b.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 3 * static_cast<std::int64_t>(bytes));
  state.SetLabel(std::string(name(isa)));
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

#if defined(__x86_64__)
// Candidate loops, for comparison with ReduceKernels at the same sizes (dst = a + b):
//   float16 through F16C, 8 lanes (bit-identical to reduce_pair<half_t> for non-NaN results);
//   float with non-temporal stores (no read-for-ownership of dst; for outputs beyond the L3).
__attribute__((target("avx2,f16c"))) void half_sum_f16c(std::uint16_t* d, const std::uint16_t* a,
                                                         const std::uint16_t* b, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm256_cvtps_ph(_mm256_add_ps(x, y), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (; i < n; ++i) d[i] = reduce_pair<half_t>(ReduceOp::sum, half_t{a[i]}, half_t{b[i]}).bits;
}

__attribute__((target("avx2"))) void float_sum_stream(float* d, const float* a, const float* b, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 8)  // page-aligned buffers, n a multiple of 8
    _mm256_stream_ps(d + i, _mm256_add_ps(_mm256_load_ps(a + i), _mm256_load_ps(b + i)));
  _mm_sfence();
}

void BM_HalfSumF16C(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Buffer a(bytes), b(bytes), d(bytes);
  fill_small<half_t>(a);
  fill_small<half_t>(b);
  const auto* pa = reinterpret_cast<const std::uint16_t*>(a.data());
  const auto* pb = reinterpret_cast<const std::uint16_t*>(b.data());
  auto* pd = reinterpret_cast<std::uint16_t*>(d.data());
  for (auto _ : state) {
    half_sum_f16c(pd, pa, pb, bytes / 2);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 3 * static_cast<std::int64_t>(bytes));
}

void BM_FloatSumStream(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Buffer a(bytes), b(bytes), d(bytes);
  fill_small<float>(a);
  fill_small<float>(b);
  for (auto _ : state) {
    float_sum_stream(reinterpret_cast<float*>(d.data()), reinterpret_cast<const float*>(a.data()),
                     reinterpret_cast<const float*>(b.data()), bytes / 4);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 3 * static_cast<std::int64_t>(bytes));
}
#endif

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
BENCHMARK(BM_Reduce<bfloat16_t>)->Apply([](auto* b) { Sizes(b, {2, 1}); })->ArgNames({"bytes", "in", "out"});
BENCHMARK(BM_Reduce<fp8_e4m3_t>)->Apply([](auto* b) { Sizes(b, {2, 1}); })->ArgNames({"bytes", "in", "out"});
BENCHMARK(BM_Reduce<fp8_e5m2_t>)->Apply([](auto* b) { Sizes(b, {2, 1}); })->ArgNames({"bytes", "in", "out"});
BENCHMARK(BM_Reduce<std::int8_t>)->Apply([](auto* b) { Sizes(b, {2, 1}); })->ArgNames({"bytes", "in", "out"});
// Ring steps of every operation from 2 MiB: float on the widest set, fp8 on each set this
// processor has (portable: the block loop, through float buffers).
void OpArgs(benchmark::internal::Benchmark* b, bool every_isa) {
  for (std::int64_t s : {2 * MiB, 8 * MiB, 64 * MiB})
    for (std::int64_t op = 0; op < 4; ++op)  // sum, prod, min, max (kAllReduceOps)
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(std::size(kAllVectorIsas)); ++i)
        if (vector_isa_available(kAllVectorIsas[i]) && (every_isa || kAllVectorIsas[i] == best_vector_isa()))
          b->Args({s, op, i});
  b->ArgNames({"bytes", "op", "isa"});
}
BENCHMARK(BM_ReduceOp<float>)->Apply([](auto* b) { OpArgs(b, false); });
BENCHMARK(BM_ReduceOp<fp8_e4m3_t>)->Apply([](auto* b) { OpArgs(b, true); });
BENCHMARK(BM_ReduceOp<fp8_e5m2_t>)->Apply([](auto* b) { OpArgs(b, true); });
#if defined(__x86_64__)
BENCHMARK(BM_HalfSumF16C)->Apply([](auto* b) { Sizes(b, {}); })->ArgNames({"bytes"});
BENCHMARK(BM_FloatSumStream)->Apply([](auto* b) { Sizes(b, {}); })->ArgNames({"bytes"});
#endif

// ---------------------------------------------------------------------------------------------
// Core to core: a cache line bounced between a thread on CPU 0 and one on CPU 1 (round trip),
// and 64 KiB pieces handed from one core to the other through 16 slots of 1 MiB in all (what a
// CPU channel does; bytes/s count the bytes handed over). Both depend on where the two cores
// sit (one L3 or two), which a virtual machine does not show.
// ---------------------------------------------------------------------------------------------
void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void BM_CorePingPong(benchmark::State& state) {
  alignas(128) std::atomic<std::uint64_t> ball{0};
  constexpr std::uint64_t kRounds = 10000;
  std::atomic<bool> stop{false};
  std::thread peer([&] {
    pin(1);
    std::uint64_t want = 1;
    while (!stop.load(std::memory_order_relaxed)) {
      if (ball.load(std::memory_order_acquire) == want) {
        ball.store(want + 1, std::memory_order_release);
        want += 2;
      }
    }
  });
  pin(0);
  std::uint64_t v = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    for (std::uint64_t r = 0; r < kRounds; ++r) {
      ball.store(v + 1, std::memory_order_release);
      while (ball.load(std::memory_order_acquire) != v + 2) {
      }
      v += 2;
    }
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  stop = true;
  peer.join();
  state.counters["round_trip_ns"] = ns / static_cast<double>(state.iterations() * kRounds);
}

void BM_CoreHandoff(benchmark::State& state) {
  constexpr std::size_t kSlot = 64 * 1024, kDepth = 16, kTotal = 64 * MiB;
  Buffer slots(kSlot * kDepth), src(kTotal), dst(kTotal);
  alignas(128) std::atomic<std::uint64_t> tail{0};
  alignas(128) std::atomic<std::uint64_t> head{0};
  std::atomic<int> go{0};
  std::atomic<bool> stop{false};
  constexpr std::uint64_t kPieces = kTotal / kSlot;
  std::thread consumer([&] {
    pin(1);
    int seen = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      if (go.load(std::memory_order_acquire) == seen) continue;
      ++seen;
      for (std::uint64_t i = 0; i < kPieces; ++i) {
        const std::uint64_t h = head.load(std::memory_order_relaxed);
        while (tail.load(std::memory_order_acquire) == h) {
        }
        std::memcpy(dst.data() + i * kSlot, slots.data() + (h % kDepth) * kSlot, kSlot);
        head.store(h + 1, std::memory_order_release);
      }
    }
  });
  pin(0);
  int round = 0;
  for (auto _ : state) {
    go.store(++round, std::memory_order_release);
    for (std::uint64_t i = 0; i < kPieces; ++i) {
      const std::uint64_t t = tail.load(std::memory_order_relaxed);
      while (t - head.load(std::memory_order_acquire) >= kDepth) {
      }
      std::memcpy(slots.data() + (t % kDepth) * kSlot, src.data() + i * kSlot, kSlot);
      tail.store(t + 1, std::memory_order_release);
    }
    while (head.load(std::memory_order_acquire) != tail.load(std::memory_order_relaxed)) {
    }
  }
  stop = true;
  consumer.join();
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotal));
}

BENCHMARK(BM_CorePingPong)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CoreHandoff)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---------------------------------------------------------------------------------------------
// The harness's cost per timed call: the runner's batch calls Implementation::run(), which for
// `mpi` checks its arguments and calls MPI_Allreduce. On MPI_COMM_SELF with 1 KiB the library
// call is short, so the difference between these two is the harness's own time per iteration.
// ---------------------------------------------------------------------------------------------
void BM_AllreduceSelf(benchmark::State& state, bool through_impl) {
  constexpr std::size_t kCount = 256;
  Buffer send(kCount * 4), recv(kCount * 4);
  fill_small<float>(send);
  std::unique_ptr<Implementation> impl = make_mpi_baseline();
  ImplContext ctx;
  ctx.comm = MPI_COMM_SELF;
  impl->setup(ctx);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_SELF, &comm);
  const CallArgs args{CaseSpec{}, send.data(), recv.data(), kCount};
  for (auto _ : state) {
    if (through_impl) impl->run(args);
    else MPI_Allreduce(send.data(), recv.data(), kCount, MPI_FLOAT, MPI_SUM, comm);
    benchmark::ClobberMemory();
  }
  MPI_Comm_free(&comm);
}
BENCHMARK_CAPTURE(BM_AllreduceSelf, bare_MPI_Allreduce, false);
BENCHMARK_CAPTURE(BM_AllreduceSelf, mpi_implementation_run, true);

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
  return test::RecordBuilder()
      .float_bytes(1024ull << (i % 17))
      .in_place(i % 2)
      .ranks(2, 2, 1)
      .iterations(20, 5)
      .times_us(123.456 + static_cast<double>(i), 120.5, 110.25, 140.75, 150.125)
      .cv(0.0625)
      .algbw(8.5)
      .busbw(8.5, 8.7);
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

// MPI is initialised for the harness-cost benchmarks (a singleton: no mpirun needed).
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
