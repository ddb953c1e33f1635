// Link micro-benchmarks (Google Benchmark): the ceilings `ccbench links` and the transports are
// measured against (docs/guides/links.md, "Link micro-benchmarks"). Host paths here; GPU paths in
// link_bench_gpu.cpp (skipped with the reason where there is no GPU, or no CUDA in the build).
//   BM_ShmMemcpy/<bytes>          memcpy from private memory into a MAP_SHARED mapping (the copy
//                                 the shm channel makes on each side)
//   BM_TcpLoopback/<streams>      TCP over 127.0.0.1: one sender and one receiver thread per
//                                 stream, 1 MiB writes (as the loopback figure of evidence
//                                 h200x2-20261130-ceilings)
// bytes_per_second counts the bytes moved once; the console prints it in binary units (G/s =
// GiB/s), the JSON in bytes/s: tests/benchmarks/link_ceilings.py compares it in GB/s (1e9) with
// the anchors.
// Run: build/ccbench_link_bench --benchmark_out=links.json --benchmark_out_format=json
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

namespace {

constexpr std::int64_t KiB = 1024, MiB = 1024 * KiB;

void BM_ShmMemcpy(benchmark::State& state) {
  const auto bytes = static_cast<size_t>(state.range(0));
  void* shared = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    state.SkipWithError(("mmap of " + std::to_string(bytes) + " shared bytes failed: " + std::strerror(errno)).c_str());
    return;
  }
  std::vector<char> src(bytes, 1);
  std::memset(shared, 0, bytes);  // fault the pages in before timing
  for (auto _ : state) {
    std::memcpy(shared, src.data(), bytes);
    benchmark::DoNotOptimize(shared);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  munmap(shared, bytes);
}
// Wall-clock time: the rate a rank gets, also when others share its core.
BENCHMARK(BM_ShmMemcpy)->Arg(64 * KiB)->Arg(1 * MiB)->Arg(16 * MiB)->Arg(64 * MiB)->UseRealTime();

// A connected TCP pair over loopback; -1 on failure with `why` set.
bool tcp_pair(int* out_fd, int* in_fd, std::string* why) {
  int lsn = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (lsn < 0 || bind(lsn, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(lsn, 1) != 0 ||
      getsockname(lsn, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    *why = std::string("loopback listen failed: ") + std::strerror(errno);
    if (lsn >= 0) close(lsn);
    return false;
  }
  *out_fd = socket(AF_INET, SOCK_STREAM, 0);
  if (*out_fd < 0 || connect(*out_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    *why = std::string("loopback connect failed: ") + std::strerror(errno);
    close(lsn);
    return false;
  }
  *in_fd = accept(lsn, nullptr, nullptr);
  close(lsn);
  const int one = 1;
  setsockopt(*out_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return *in_fd >= 0;
}

// Each iteration moves kPerStream bytes on every stream, all streams at once.
void BM_TcpLoopback(benchmark::State& state) {
  constexpr size_t kWrite = 1 * MiB, kPerStream = 64 * MiB;
  const int streams = static_cast<int>(state.range(0));
  std::vector<int> out(static_cast<size_t>(streams)), in(static_cast<size_t>(streams));
  for (int s = 0; s < streams; ++s) {
    std::string why;
    if (!tcp_pair(&out[static_cast<size_t>(s)], &in[static_cast<size_t>(s)], &why)) {
      state.SkipWithError(why.c_str());
      return;
    }
  }
  std::vector<char> wbuf(kWrite, 1);
  for (auto _ : state) {
    std::vector<std::thread> threads;
    std::atomic<bool> failed{false};
    for (int s = 0; s < streams; ++s) {
      threads.emplace_back([&, fd = out[static_cast<size_t>(s)]] {
        for (size_t sent = 0; sent < kPerStream;) {
          const ssize_t n = send(fd, wbuf.data(), std::min(kWrite, kPerStream - sent), 0);
          if (n <= 0) return failed.store(true);
          sent += static_cast<size_t>(n);
        }
      });
      threads.emplace_back([&, fd = in[static_cast<size_t>(s)]] {
        std::vector<char> rbuf(kWrite);
        for (size_t got = 0; got < kPerStream;) {
          const ssize_t n = recv(fd, rbuf.data(), rbuf.size(), 0);
          if (n <= 0) return failed.store(true);
          got += static_cast<size_t>(n);
        }
      });
    }
    for (auto& t : threads) t.join();
    if (failed) {
      state.SkipWithError("a loopback stream failed");
      break;
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * streams * static_cast<std::int64_t>(kPerStream));
  state.counters["streams"] = streams;
  for (int s = 0; s < streams; ++s) {
    close(out[static_cast<size_t>(s)]);
    close(in[static_cast<size_t>(s)]);
  }
}
BENCHMARK(BM_TcpLoopback)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
