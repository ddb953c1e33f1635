#pragma once
// Exit codes of ccbench (docs/design.md, "Exit codes"). Every rank computes its own code; the job's
// code is the most severe one over all ranks (agree_exit_code in harness/job/bootstrap.h agrees on it).
#include <string_view>

namespace ccbench {

enum class ExitCode : int {
  ok = 0,
  wrong_results = 1,  // a check found a wrong element or a damaged guard region
  usage = 2,          // bad flags, sizes, files or environment
  precondition = 3,   // transport unavailable, too few GPUs, out of memory, impl cannot run here
  threshold = 4,      // an acceptance threshold was missed
  timeout = 5,        // a deadline expired (hang)
  runtime = 6,        // CUDA / NCCL / MPI / verbs / socket error
};

// How severe a code is when ranks disagree: a hang outranks a runtime error, which outranks a
// precondition, which outranks wrong results, which outranks a missed threshold.
constexpr int severity(ExitCode c) {
  switch (c) {
    case ExitCode::ok: return 0;
    case ExitCode::threshold: return 1;
    case ExitCode::wrong_results: return 2;
    case ExitCode::precondition: return 3;
    case ExitCode::usage: return 4;
    case ExitCode::runtime: return 5;
    case ExitCode::timeout: return 6;
  }
  return 5;
}

constexpr ExitCode more_severe(ExitCode a, ExitCode b) { return severity(a) >= severity(b) ? a : b; }

constexpr std::string_view exit_code_name(ExitCode c) {
  switch (c) {
    case ExitCode::ok: return "ok";
    case ExitCode::wrong_results: return "wrong results";
    case ExitCode::usage: return "usage error";
    case ExitCode::precondition: return "precondition not met";
    case ExitCode::threshold: return "acceptance threshold missed";
    case ExitCode::timeout: return "timeout";
    case ExitCode::runtime: return "runtime error";
  }
  return "unknown";
}

}  // namespace ccbench
