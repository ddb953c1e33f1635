#include "harness/job/bootstrap.h"

#include <dlfcn.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/checks.h"
#include "core/error.h"
#include "core/knobs.h"

namespace ccbench {

int launcher_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK"}) {
    if (const char* v = std::getenv(var)) return std::atoi(v);
  }
  return 0;
}

int report_error_before_mpi(const Error& e, int launcher_rank) {
  if (launcher_rank != 0) {
    std::this_thread::sleep_for(kPeerErrorGrace);
    fmt::print(stderr, "ccbench: error: rank {}: {}\n", launcher_rank, e.what());
  } else {
    fmt::print(stderr, "ccbench: error: {}\n", e.what());
  }
  return static_cast<int>(e.code());
}

namespace {

// Whether `a` runs a function of a library that installs backtrace handlers (bootstrap.h).
bool handler_of_backtrace_library(const struct sigaction& a) {
  if (!(a.sa_flags & SA_SIGINFO) && (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN)) return false;
  void* fn =
      (a.sa_flags & SA_SIGINFO) ? reinterpret_cast<void*>(a.sa_sigaction) : reinterpret_cast<void*>(a.sa_handler);
  Dl_info info{};
  if (dladdr(fn, &info) == 0 || info.dli_fname == nullptr) return false;
  const char* file = std::strrchr(info.dli_fname, '/');
  file = file ? file + 1 : info.dli_fname;
  return std::strncmp(file, "libinfinipath", 13) == 0 || std::strncmp(file, "libpsm", 6) == 0;
}

}  // namespace

int reset_library_signal_handlers() {
  setenv("IPATH_NO_BACKTRACE", "1", 0);
  setenv("HFI_NO_BACKTRACE", "1", 0);
  int reset = 0;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT, SIGTERM}) {
    struct sigaction now {};
    if (sigaction(sig, nullptr, &now) != 0 || !handler_of_backtrace_library(now)) continue;
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    if (sigaction(sig, &dfl, nullptr) == 0) ++reset;
  }
  return reset;
}

void mpi_start(int* argc, char*** argv) {
  reset_library_signal_handlers();
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    fail(ExitCode::runtime, "MPI_Init_thread failed: is this an MPI launch (mpirun / srun)?");
  CCB_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

void mpi_stop() {
  int finalized = 0;
  // Best effort at the very end: a failure here leaves nothing to report it to.
  if (MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) (void)MPI_Finalize();
}

std::vector<std::string> gather_strings(MPI_Comm comm, const std::string& text) {
  int rank = 0, size = 1;
  CCB_MPI(MPI_Comm_rank(comm, &rank));
  CCB_MPI(MPI_Comm_size(comm, &size));
  int len = static_cast<int>(text.size());
  std::vector<int> lens(rank == 0 ? size : 0), displs(rank == 0 ? size : 0);
  check_mpi(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm), "MPI_Gather of string lengths");
  std::string all;
  if (rank == 0) {
    int total = 0;
    for (int i = 0; i < size; ++i) {
      displs[i] = total;
      total += lens[i];
    }
    all.resize(static_cast<size_t>(total));
  }
  check_mpi(MPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm),
            "MPI_Gatherv of strings");
  std::vector<std::string> out;
  if (rank == 0)
    for (int i = 0; i < size; ++i)
      out.push_back(all.substr(static_cast<size_t>(displs[i]), static_cast<size_t>(lens[i])));
  return out;
}

RankLayout discover_layout(MPI_Comm comm) {
  int rank = 0, size = 1;
  CCB_MPI(MPI_Comm_rank(comm, &rank));
  CCB_MPI(MPI_Comm_size(comm, &size));
  char host[256] = {};  // HOST_NAME_MAX is 64 on Linux; 256 leaves room for FQDNs elsewhere
  if (gethostname(host, sizeof(host) - 1) != 0) fail(ExitCode::runtime, "gethostname failed: {}", std::strerror(errno));
  std::vector<char> all(static_cast<size_t>(size) * sizeof(host));
  check_mpi(MPI_Allgather(host, sizeof(host), MPI_CHAR, all.data(), sizeof(host), MPI_CHAR, comm),
            "MPI_Allgather of host names");
  std::vector<std::string> hosts;
  for (int i = 0; i < size; ++i) hosts.emplace_back(all.data() + static_cast<size_t>(i) * sizeof(host));
  // CCBENCH_HOSTID (emulated nodes, as NCCL_HOSTID), truncated to the same fixed width.
  char id[sizeof(host)] = {};
  host_id_from_environment().copy(id, sizeof(id) - 1);
  check_mpi(MPI_Allgather(id, sizeof(id), MPI_CHAR, all.data(), sizeof(id), MPI_CHAR, comm),
            "MPI_Allgather of host ids");
  std::vector<std::string> ids;
  for (int i = 0; i < size; ++i) ids.emplace_back(all.data() + static_cast<size_t>(i) * sizeof(id));
  return RankLayout::from_hosts(rank, std::move(hosts), ids);
}

void check_same_on_every_rank(MPI_Comm comm, const RankLayout& layout, const std::string& value, ExitCode code,
                              const std::string& rule) {
  auto all = gather_strings(comm, value);
  std::string verdict;
  if (layout.rank == 0) {
    for (size_t r = 1; r < all.size(); ++r)
      if (all[r] != all[0]) verdict += fmt::format("\n  rank {} (host {}): {}", r, layout.host_of[r], all[r]);
    if (!verdict.empty())
      verdict = fmt::format("ranks differ from rank 0 (host {}: {}):{}", layout.host_of[0], all[0], verdict);
  }
  int len = static_cast<int>(verdict.size());
  check_mpi(MPI_Bcast(&len, 1, MPI_INT, 0, comm), "MPI_Bcast");
  verdict.resize(static_cast<size_t>(len));
  check_mpi(MPI_Bcast(verdict.data(), len, MPI_CHAR, 0, comm), "MPI_Bcast");
  if (!verdict.empty()) throw Error::agreed(code, fmt::format("{}; {}", rule, verdict));
}

void check_same_run(MPI_Comm comm, const RankLayout& layout, const std::string& fingerprint) {
  check_same_on_every_rank(comm, layout, fingerprint, ExitCode::precondition,
                           "every rank must run the same ccbench build with the same arguments");
}

void check_same_tuning(MPI_Comm comm, const RankLayout& layout) {
  const std::vector<std::string> mine = tuning_settings();
  check_same_on_every_rank(
      comm, layout, mine.empty() ? "no tuning variable set" : fmt::format("{}", fmt::join(mine, " ")), ExitCode::usage,
      "every rank must have the same tuning variables (CCBENCH_GPU_*, CCBENCH_CPU_*, "
      "CCBENCH_ONESHOT_*, CCBENCH_BEST_*; docs/reference.md, Environment variables): they size what peers "
      "address in each other's memory; pass them to every rank (mpirun -x NAME)");
}

Outcome agree_outcome(MPI_Comm comm, const Outcome& mine) {
  Outcome agreed{agree_exit_code(comm, mine.code), {}};
  auto messages = gather_strings(comm, mine.code == ExitCode::ok ? std::string() : mine.message);
  const int mine_agreed = mine.code != ExitCode::ok && mine.agreed ? 1 : 0;
  std::vector<int> agreed_on(messages.size());
  check_mpi(MPI_Gather(&mine_agreed, 1, MPI_INT, agreed_on.data(), 1, MPI_INT, 0, comm), "MPI_Gather of agreed errors");
  std::vector<std::string> said;  // agreed messages already given
  for (size_t r = 0; r < messages.size(); ++r) {
    if (messages[r].empty()) continue;
    if (agreed_on[r] && std::find(said.begin(), said.end(), messages[r]) != said.end()) continue;
    const std::string who = agreed_on[r] ? "" : fmt::format("rank {}: ", r);
    if (agreed_on[r]) said.push_back(messages[r]);
    agreed.message += fmt::format("{}{}{}", agreed.message.empty() ? "" : "; ", who, messages[r]);
  }
  if (agreed.code != ExitCode::ok && messages.size() && agreed.message.empty())
    agreed.message = "failed on another rank";
  int len = static_cast<int>(agreed.message.size());
  check_mpi(MPI_Bcast(&len, 1, MPI_INT, 0, comm), "MPI_Bcast");
  agreed.message.resize(static_cast<size_t>(len));
  check_mpi(MPI_Bcast(agreed.message.data(), len, MPI_CHAR, 0, comm), "MPI_Bcast");
  return agreed;
}

ExitCode agree_exit_code(MPI_Comm comm, ExitCode mine) {
  int sev = severity(mine), worst = sev;
  if (MPI_Allreduce(&sev, &worst, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    return more_severe(mine, ExitCode::runtime);
  for (ExitCode c : {ExitCode::ok, ExitCode::threshold, ExitCode::wrong_results, ExitCode::precondition,
                     ExitCode::usage, ExitCode::runtime, ExitCode::timeout})
    if (severity(c) == worst) return c;
  return ExitCode::runtime;
}

}  // namespace ccbench
