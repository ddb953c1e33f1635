#pragma once
// MPI start-up and the agreements every rank takes part in.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <mpi.h>

#include "core/checks.h"
#include "core/error.h"
#include "core/exit_code.h"
#include "topologies/layout.h"

namespace ccbench {

// This process's rank as the launcher announces it before MPI_Init (OpenMPI, PMI, PMIx, Slurm);
// 0 when started alone. Used to let only rank 0 print usage errors.
int launcher_rank();

// An error found before MPI started (a bad flag, file or variable), said once for the whole job;
// returns its exit code. Rank 0 says it at once. Any other rank first leaves the launcher
// kPeerErrorGrace to end it: mpirun (and srun --kill-on-bad-exit) end every rank once one exits
// non-zero, so rank 0, which has the same error where all ranks got the same command line, says
// it even when it is the last to get there. A rank still running after the grace has an error of
// its own and says it, naming itself.
int report_error_before_mpi(const Error& e, int launcher_rank);
// Far longer than ranks of one launch start apart (5 ranks within 0.07 s of each other on the
// 2-core build machine at a load average of 18), short enough for an error only one rank has.
inline constexpr std::chrono::seconds kPeerErrorGrace{3};

// MPI_Init_thread (funneled), after reset_library_signal_handlers(); MPI errors return codes
// instead of aborting.
void mpi_start(int* argc, char*** argv);
void mpi_stop();

// infinipath-psm (libinfinipath, which libfabric's psm provider links, so it loads with ccbench)
// takes SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT and SIGTERM in its constructor unless
// IPATH_NO_BACKTRACE is set; its handler prints a backtrace and calls exit(1). Open MPI sets that
// variable (and PSM2's HFI_NO_BACKTRACE) in its daemons, so ranks mpirun starts never get the
// handlers; ranks srun starts do, and a rank that crashed there ended with exit code 1 and
// "terminated with signal 11" from libinfinipath instead of Open MPI's report, 139 and a core
// file (cluster.slurm under load). Puts back the default action of each of those signals whose
// handler lives in such a library, sets both variables where unset (for libraries loaded later),
// and returns how many handlers it reset.
int reset_library_signal_handlers();

// The ranks of `comm`, their hosts and nodes (an all-gather of host names).
RankLayout discover_layout(MPI_Comm comm);

// The most severe of every rank's code (core/exit_code.h).
ExitCode agree_exit_code(MPI_Comm comm, ExitCode mine);

// What a step ended with on this rank: ok, or the code and message of what it threw, and whether
// that error was already agreed (Error::agreed: every rank threw the same).
struct Outcome {
  ExitCode code = ExitCode::ok;
  std::string message;
  bool agreed = false;
};

// Runs `step`, turning what it throws into an Outcome (ccbench::Error keeps its code; any other
// exception is a runtime error).
template <typename F>
Outcome run_catching(F&& step) {
  try {
    step();
  } catch (const Error& e) {
    return {e.code(), e.what(), e.is_agreed()};
  } catch (const std::exception& e) {
    return {ExitCode::runtime, e.what(), false};
  }
  return {};
}

// Every rank's outcome agreed: the most severe code, and on every rank the failures as
// "rank R: message; rank S: message" ("failed on another rank" if none left a message). An
// agreed error, the same on every rank that threw it, is given once and as it is (its message
// names the rank it started on).
Outcome agree_outcome(MPI_Comm comm, const Outcome& mine);

// Collective: runs `step` on every rank; if it failed anywhere, every rank throws the agreed
// error, its message prefixed with `what` ("--overlap: rank 1: ...").
template <typename F>
void agreed_step(MPI_Comm comm, const char* what, F&& step) {
  const Outcome agreed = agree_outcome(comm, run_catching(std::forward<F>(step)));
  if (agreed.code != ExitCode::ok) throw Error::agreed(agreed.code, fmt::format("{}: {}", what, agreed.message));
}

// Every rank's `text` on rank 0 (other ranks get an empty vector).
std::vector<std::string> gather_strings(MPI_Comm comm, const std::string& text);

// Collective: `value` must be the same on every rank. Otherwise every rank throws Error(code):
// "`rule`; ranks differ from rank 0 (host H: V0): rank R (host HR): VR ...".
void check_same_on_every_rank(MPI_Comm comm, const RankLayout& layout, const std::string& value, ExitCode code,
                              const std::string& rule);
// Every rank must run the same ccbench build with the same arguments: `fingerprint` (version,
// git hash, arguments) compared, Error(precondition) naming the ranks and hosts that differ.
void check_same_run(MPI_Comm comm, const RankLayout& layout, const std::string& fingerprint);
// Every rank must have the same tuning variables (core/knobs.h tuning_settings()): they size the
// channels, slots and blocks peers address in each other's memory, so a rank that differs would
// hang or corrupt its peers. Error(usage) naming the ranks and what each has, within seconds.
void check_same_tuning(MPI_Comm comm, const RankLayout& layout);

}  // namespace ccbench
