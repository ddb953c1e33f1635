#pragma once
// What the MPI test programs of the transports share (tcp_test, ofi_test): failures counted per
// rank, checks, expected errors, polling with a deadline, the real rank layout, and the verdict
// over every rank at the end.
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include "core/error.h"
#include "topologies/layout.h"

namespace ccbench::mpi_checks {

inline int g_rank = 0, g_n = 1;
inline long g_failures = 0, g_checks = 0;

template <typename... Args>
void failure(fmt::format_string<Args...> f, Args&&... args) {
  ++g_failures;
  std::fprintf(stderr, "FAIL rank %d: %s\n", g_rank, fmt::format(f, std::forward<Args>(args)...).c_str());
}

inline void check(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok) failure("{}", what);
}

// f() must throw Error(code) whose message contains every string of `needles`; rank 0 prints it.
inline void expect_error(ExitCode code, const std::string& what, const std::function<void()>& f,
                         const std::vector<std::string>& needles) {
  ++g_checks;
  try {
    f();
    failure("{}: no error", what);
  } catch (const Error& e) {
    bool ok = e.code() == code;
    for (const std::string& n : needles) ok = ok && std::string(e.what()).find(n) != std::string::npos;
    if (!ok)
      failure("{}: got '{}' (code {}), expected code {} mentioning '{}'", what, e.what(), static_cast<int>(e.code()),
              static_cast<int>(code), fmt::join(needles, "', '"));
    else if (g_rank == 0)
      std::printf("# %s: code %d: %s\n", what.c_str(), static_cast<int>(e.code()), e.what());
  }
}

// Polls until f() is true or `ms` pass. The default bounds what must happen: generous, since two
// busy cores may hold a peer's progress back for seconds.
inline bool eventually(const std::function<bool()>& f, int ms = 10000) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return f();
}

// The ranks as their host names place them.
inline RankLayout real_layout() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::vector<char> all(static_cast<size_t>(g_n) * 256);
  MPI_Allgather(name, 256, MPI_CHAR, all.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> hosts;
  for (int r = 0; r < g_n; ++r) hosts.emplace_back(&all[static_cast<size_t>(r) * 256]);
  return RankLayout::from_hosts(g_rank, hosts);
}

// MPI with errors returned; g_rank and g_n set.
inline void start(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_n);
}

// Failures and checks summed over the ranks, the verdict printed by rank 0, MPI finalized: the
// exit code (1 when any rank saw a failure).
inline int finish(std::chrono::steady_clock::time_point t0) {
  long failures = 0, checks = 0;
  MPI_Allreduce(&g_failures, &failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&g_checks, &checks, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0)
    std::printf("%s: %d ranks, %ld checks (all ranks), %ld failures, %.1f s\n", failures ? "FAILED" : "OK", g_n,
                checks, failures, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  MPI_Finalize();
  return failures ? 1 : 0;
}

// The main() of a test program: MPI started, `run` on every rank (at least `min_ranks`), the
// verdict; prints "<title>: N ranks, C checks per rank: ok" when every check held on every rank.
inline int main_of(int* argc, char*** argv, const char* title, int min_ranks, const std::function<void()>& run) {
  const auto t0 = std::chrono::steady_clock::now();
  start(argc, argv);
  if (g_n < min_ranks) {
    if (g_rank == 0) std::printf("%s: needs %d or more ranks, got %d\n", title, min_ranks, g_n);
    MPI_Finalize();
    return 1;
  }
  run();
  const bool ok = finish(t0) == 0;
  if (ok && g_rank == 0) std::printf("%s: %d ranks, %ld checks per rank: ok\n", title, g_n, g_checks);
  return ok ? 0 : 1;
}

}  // namespace ccbench::mpi_checks
