#include "harness/results_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/text_file.h"

namespace ccbench {

namespace fs = std::filesystem;

namespace {

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

std::string utc_now(const char* format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, format, &tm);
  return stamp;
}

std::string default_results_dir() {
  return fmt::format("ccbench-results/{}-{}", utc_now("%Y%m%dT%H%M%SZ"), host_name());
}

// Who holds the lock, from what the lock file says: "pid 123 on host a, started ...: COMMAND".
std::string describe_holder(const std::string& lock_path) {
  std::string text;
  try {
    text = read_text_file(lock_path);
  } catch (const Error&) {}
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("pid")) return "a launch that has not yet said who it is";
  return fmt::format("pid {} on host {}, started {}: {}", j.value("pid", 0), j.value("host", "?"),
                     j.value("started", "?"), j.value("command", "?"));
}

// Writes who holds the lock into the lock file, for the next launch's message.
void describe_holder_in(int fd, const std::string& path, const std::string& command_line) {
  const nlohmann::json holder = {{"pid", static_cast<long>(getpid())},
                                 {"host", host_name()},
                                 {"started", utc_now("%Y-%m-%dT%H:%M:%SZ")},
                                 {"command", command_line}};
  const std::string text = holder.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  // The description is for the next launch's message; the lock itself is already held.
  if (ftruncate(fd, 0) != 0 || pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    fmt::print(stderr, "ccbench: note: cannot describe this launch in {}: {}\n", path, std::strerror(errno));
}

// Whether the descriptor still is the file at `path`: a launch that held the folder removes its
// lock file (and the folder, when it made it and wrote nothing) before it lets go, and a lock on
// a removed file stops no one.
bool still_named(int fd, const std::string& path) {
  struct stat held {
  }, named{};
  return fstat(fd, &held) == 0 && stat(path.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
         held.st_dev == named.st_dev;
}

enum class Lock { held, no_locks, gone };  // gone: the folder or its lock file went meanwhile: try again

// Takes the folder's lock (the descriptor in `fd`), or says who holds it (Error(usage)).
Lock lock_folder(const std::string& dir, const std::string& command_line, int& fd) {
  const std::string path = dir + "/" + kFolderLockName;
  fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ENOENT) return Lock::gone;
  if (fd < 0) fail(ExitCode::usage, "--out: the results folder '{}' is not writable: {}", dir, std::strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    close(fd);
    fd = -1;
    if (err == EWOULDBLOCK)
      fail(ExitCode::usage,
           "--out: the results folder '{}' is in use by another ccbench launch ({}); wait for it to "
           "end, or give another --out",
           dir, describe_holder(path));
    fmt::print(stderr,
               "ccbench: note: cannot lock the results folder '{}' ({}): a second launch into it would not "
               "be stopped\n",
               dir, std::strerror(err));
    return Lock::no_locks;
  }
  if (!still_named(fd, path)) {
    close(fd);
    fd = -1;
    return Lock::gone;
  }
  describe_holder_in(fd, path, command_line);
  return Lock::held;
}

// The files of an earlier run that this launch would write over; removed with `overwrite`.
void settle_earlier_run(const std::string& dir, const std::vector<std::string>& files, bool overwrite) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const std::string& f : files)
    if (fs::exists(fs::symlink_status(dir + "/" + f, ec))) found.push_back(f);
  if (found.empty()) return;
  if (!overwrite)
    fail(ExitCode::usage,
         "--out: '{}' already holds the results of an earlier run ({}); they are never replaced "
         "silently: give another --out, leave --out out for a new folder, or add --overwrite to replace them",
         dir, fmt::join(found, ", "));
  for (const std::string& f : found)
    if (!fs::remove(dir + "/" + f, ec) && ec)
      fail(ExitCode::usage, "--overwrite: cannot remove {}/{} of the earlier run: {}", dir, f, ec.message());
}

}  // namespace

ResultsFolder::ResultsFolder(ResultsFolder&& o) noexcept
    : path_(std::move(o.path_)), lock_fd_(std::exchange(o.lock_fd_, -1)), created_(o.created_), owned_(o.owned_),
      used_(o.used_) {
  o.created_ = false;
}

ResultsFolder& ResultsFolder::operator=(ResultsFolder&& o) noexcept {
  if (this != &o) {
    remove_if_unused();
    if (lock_fd_ >= 0) close(lock_fd_);
    path_ = std::move(o.path_);
    lock_fd_ = std::exchange(o.lock_fd_, -1);
    created_ = std::exchange(o.created_, false);
    owned_ = o.owned_;
    used_ = o.used_;
  }
  return *this;
}

ResultsFolder::~ResultsFolder() {
  remove_if_unused();
  if (lock_fd_ >= 0) close(lock_fd_);
}

// A launch that stopped before it wrote anything leaves no folder behind, only where it made one
// and holds it: a launch refused by another's lock has nothing of its own to remove.
void ResultsFolder::remove_if_unused() {
  if (!created_ || used_ || path_.empty() || !owned_) return;
  std::error_code ec;
  fs::remove(path_ + "/" + kFolderLockName, ec);  // while still held: a launch that opened it meanwhile tries again
  fs::remove(path_, ec);                          // only if empty: another launch may already be in it
  created_ = false;
}

ResultsFolder prepare_output_dir(const FolderRequest& request) {
  ResultsFolder folder;
  std::string dir = request.requested.empty() ? default_results_dir() : request.requested;
  if (request.requested.empty()) {  // a new folder: never mix two runs started in the same second
    const std::string base = dir;
    for (int i = 2; fs::exists(dir); ++i) dir = fmt::format("{}-{}", base, i);
  }
  // Create or open, then lock; only what this launch made and holds is ever its to remove. A
  // launch that held the folder may remove it between our steps: then again, from the start.
  for (Lock got = Lock::gone; got == Lock::gone;) {
    std::error_code ec;
    const bool created = fs::create_directories(dir, ec);
    if (ec) fail(ExitCode::usage, "--out: cannot create the results folder '{}': {}", dir, ec.message());
    if (!fs::is_directory(dir)) fail(ExitCode::usage, "--out: '{}' exists and is not a folder", dir);
    if (request.between_create_and_lock) request.between_create_and_lock();
    got = lock_folder(dir, request.command_line, folder.lock_fd_);
    folder.path_ = dir;
    folder.created_ = folder.created_ || created;
    folder.owned_ = got != Lock::gone;
  }
  settle_earlier_run(dir, request.files, request.overwrite);
  const std::string probe = fmt::format("{}/.ccbench-write-test.{}", dir, getpid());
  FILE* f = std::fopen(probe.c_str(), "w");
  if (!f) fail(ExitCode::usage, "--out: the results folder '{}' is not writable: {}", dir, std::strerror(errno));
  std::fclose(f);
  std::remove(probe.c_str());
  return folder;
}

}  // namespace ccbench
