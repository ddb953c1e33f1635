#include "harness/results_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"

namespace ccbench {

namespace {

std::string default_results_dir() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  return fmt::format("ccbench-results/{}-{}", stamp, host);
}

}  // namespace

// Creates the results folder and proves it writable; throws Error(usage) naming the path.
std::string prepare_output_dir(const std::string& requested) {
  std::string dir = requested.empty() ? default_results_dir() : requested;
  if (requested.empty()) {  // a new folder: never mix two runs started in the same second
    std::string base = dir;
    for (int i = 2; std::filesystem::exists(dir); ++i) dir = fmt::format("{}-{}", base, i);
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail(ExitCode::usage, "--out: cannot create the results folder '{}': {}", dir, ec.message());
  if (!std::filesystem::is_directory(dir)) fail(ExitCode::usage, "--out: '{}' exists and is not a folder", dir);
  std::string probe = dir + "/.ccbench-write-test";
  FILE* f = std::fopen(probe.c_str(), "w");
  if (!f) fail(ExitCode::usage, "--out: the results folder '{}' is not writable: {}", dir, std::strerror(errno));
  std::fclose(f);
  std::remove(probe.c_str());
  return dir;
}

}  // namespace ccbench
