#pragma once
// The results folder of a launch (`ccbench run`, `ccbench links`): created, proved writable and
// held by this launch alone. Before MPI, on the launcher's rank 0 (the only rank that writes).
//
// One writer per folder: the launch takes an exclusive flock() on FOLDER/.ccbench.lock and keeps
// it until the process ends; the kernel releases it then, however the process ends, so the lock
// of a dead process is no lock. The file holds its holder as JSON ({"pid", "host", "started"
// (UTC), "command"}); a second launch into a held folder fails at once naming that holder. The
// file stays behind when the run is over: only the lock counts, never the file being there. On a
// file system without locks (flock() refused, as some cluster mounts do) the launch goes on with
// a note on stderr.
//
// A launch refused by another's lock removes nothing, not even a folder it created itself: the
// holder is in it. A launch that made the folder and holds it removes it when it stops before
// writing anything, the lock file first while still held; a launch that opened the lock file just
// before it went finds the file no longer at its path once it has the lock, and starts over.
//
// An earlier run is never replaced silently: when the folder already holds any of the files the
// launch writes, it is refused with the way out (another --out, a new folder, or --overwrite),
// unless `overwrite`, which removes those files first so that no file of the earlier run is left
// beside the new ones.
#include <functional>
#include <string>
#include <vector>

namespace ccbench {

struct FolderRequest {
  std::string requested;           // --out; empty: a new ccbench-results/<UTC time>-<host>
  std::vector<std::string> files;  // the names this launch writes into it (results.csv, ...)
  bool overwrite = false;          // --overwrite
  std::string command_line;        // for the lock file
  // Called between creating (or finding) the folder and locking it: lets a test put another
  // launch into exactly that window, where two launches into one new folder race. Empty: none.
  std::function<void()> between_create_and_lock = {};
};

class ResultsFolder {
 public:
  ResultsFolder() = default;  // no folder (--out none, or a rank that writes nothing)
  ResultsFolder(ResultsFolder&& o) noexcept;
  ResultsFolder& operator=(ResultsFolder&& o) noexcept;
  ResultsFolder(const ResultsFolder&) = delete;
  ResultsFolder& operator=(const ResultsFolder&) = delete;
  // Releases the lock; removes the folder when this launch created it and it was never used.
  ~ResultsFolder();

  const std::string& path() const { return path_; }
  // Result files were opened in it: it stays whatever happens next.
  void mark_used() { used_ = true; }
  // Removes the folder now when this launch created it and never used it (the lock file goes
  // while still held, then the folder if nothing else is in it); the destructor does the same.
  void remove_if_unused();

 private:
  friend ResultsFolder prepare_output_dir(const FolderRequest& request);
  std::string path_;
  int lock_fd_ = -1;
  bool created_ = false;  // this launch created the folder
  bool owned_ = false;    // and holds its lock (or the file system has none): only then may it remove it
  bool used_ = false;
};

// The folder `request` asks for, created, locked and proved writable. Throws Error(usage) naming
// the path: it cannot be created or written, another launch holds it (naming the holder), or it
// holds an earlier run and `overwrite` is not set (naming the files).
ResultsFolder prepare_output_dir(const FolderRequest& request);

// The lock file's name inside a results folder.
inline constexpr const char* kFolderLockName = ".ccbench.lock";

}  // namespace ccbench
