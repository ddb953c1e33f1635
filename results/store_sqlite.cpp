// The SQLite kind of results store (results/store.h): one file on this machine's disk, WAL, a
// busy timeout so that jobs may append at the same time.
#include <sqlite3.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "results/store.h"
#include "results/store_schema.h"

namespace ccbench {

namespace {

bool busy(int rc) { return rc == SQLITE_BUSY || rc == SQLITE_LOCKED; }

// Errors of the file system under the store (as opposed to its contents): the caller gave a
// path that cannot be opened or written, a usage error as an unwritable --out is.
bool path_error(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_CANTOPEN || primary == SQLITE_PERM || primary == SQLITE_READONLY;
}
bool io_error(int rc) { return (rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_FULL; }

// Throws the error of a failed SQLite call `rc` on the store `path`: busy; a path that cannot be
// opened or written (usage, as for --out) or a failed read or write (runtime), with the OS error
// SQLite saw; else a damaged or foreign file.
[[noreturn]] void fail_on(const std::string& path, sqlite3* db, int rc, const std::string& error) {
  if (busy(rc))
    fail(ExitCode::precondition, "history {}: {}: another job has held it for {} s; try again when it is done", path,
         error, kBusyTimeoutMs / 1000);
  if (path_error(rc) || io_error(rc)) {
    const int os = db ? sqlite3_system_errno(db) : 0;
    fail(path_error(rc) ? ExitCode::usage : ExitCode::runtime, "history {}: {}{}", path, error,
         os ? fmt::format(": {}", std::strerror(os)) : "");
  }
  fail(ExitCode::precondition,
       "history {}: {} (a damaged or foreign file: move it away; the results folders of the runs are intact)", path,
       error);
}

// `sql` with PostgreSQL's $N placeholders as SQLite's ?N (the same numbering).
std::string sqlite_placeholders(const std::string& sql) {
  std::string out = sql;
  for (size_t i = 0; i + 1 < out.size(); ++i)
    if (out[i] == '$' && std::isdigit(static_cast<unsigned char>(out[i + 1]))) out[i] = '?';
  return out;
}

// A prepared statement, finalized however the caller leaves.
class Statement : public SqlRow {
 public:
  Statement(sqlite3* db, const std::string& path, const std::string& sql) : path_(path) {
    if (const int rc = sqlite3_prepare_v2(db, sqlite_placeholders(sql).c_str(), -1, &s_, nullptr); rc != SQLITE_OK)
      fail_on(path, db, rc, sqlite3_errmsg(db));
  }
  ~Statement() override { sqlite3_finalize(s_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  void bind(const std::vector<SqlValue>& params) {
    sqlite3_reset(s_);
    for (size_t i = 0; i < params.size(); ++i) {
      const int at = static_cast<int>(i) + 1;
      if (const auto* t = std::get_if<std::string>(&params[i]))
        sqlite3_bind_text(s_, at, t->c_str(), static_cast<int>(t->size()), SQLITE_TRANSIENT);
      else if (const auto* n = std::get_if<long long>(&params[i])) sqlite3_bind_int64(s_, at, *n);
      else sqlite3_bind_null(s_, at);
    }
  }
  // True: a row is ready. Tried again while SQLite answers busy without waiting (as exec_waiting).
  bool step() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    for (;;) {
      const int rc = sqlite3_step(s_);
      if (rc == SQLITE_ROW) return true;
      if (rc == SQLITE_DONE) return false;
      if (!busy(rc) || std::chrono::steady_clock::now() >= until)
        fail_on(path_, sqlite3_db_handle(s_), rc, sqlite3_errmsg(sqlite3_db_handle(s_)));
      sqlite3_reset(s_);
      std::this_thread::sleep_for(std::chrono::milliseconds(kBusyRetryMs));
    }
  }
  std::string text(int col) const override {
    const auto* t = sqlite3_column_text(s_, col);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(s_, col))) : "";
  }
  long long integer(int col) const override { return sqlite3_column_int64(s_, col); }
  bool null(int col) const override { return sqlite3_column_type(s_, col) == SQLITE_NULL; }

 private:
  sqlite3_stmt* s_ = nullptr;
  std::string path_;
};

// sqlite3_exec, tried again while another job holds the file, up to kBusyTimeoutMs: SQLite can
// answer busy at once, without its busy handler, e.g. to a job opening the file while another
// turns it to WAL (seen under ASan in mpi.history_two_jobs, 1 s into a 30 s timeout).
int exec_waiting(sqlite3* db, const char* sql, std::string* error) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    if (rc != SQLITE_OK) *error = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    if (!busy(rc) || std::chrono::steady_clock::now() >= until) return rc;
    std::this_thread::sleep_for(std::chrono::milliseconds(kBusyRetryMs));
  }
}

std::filesystem::path folder_of(const std::string& path) {
  return std::filesystem::path(path).has_parent_path() ? std::filesystem::path(path).parent_path()
                                                       : std::filesystem::path(".");
}

// Why `path` cannot be written or created, in the system's words; "" when it can. SQLite also
// writes DB-wal and DB-shm beside the file, so the folder must be writable too.
std::string unwritable(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path dir = folder_of(path);
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "it is a folder";
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0) return std::strerror(errno);
  if (!fs::is_directory(dir, ec)) return fmt::format("its folder {} does not exist", dir.string());
  if (::access(dir.c_str(), W_OK) != 0)
    return fmt::format("its folder {}: {} (SQLite writes its -wal and -shm files there)", dir.string(),
                       std::strerror(errno));
  return "";
}

// The shared (network or cluster) file system `dir` is on, or "" for a local one.
std::string shared_file_system(const std::filesystem::path& dir) {
  struct statfs fs {};
  return ::statfs(dir.c_str(), &fs) == 0 ? shared_file_system_name(static_cast<unsigned long>(fs.f_type)) : "";
}

// A store that no one can be writing to and this process cannot coordinate readers of: its
// folder is not writable here and SQLite's shared-memory file (DB-shm, which a WAL store's
// readers need and every open connection keeps) does not exist. SQLite then opens it only as
// immutable, which is what it is to us.
bool frozen(const std::string& path) {
  std::error_code ec;
  return !std::filesystem::exists(path + "-shm", ec) && ::access(folder_of(path).c_str(), W_OK) != 0;
}

// `path` as an SQLite URI that opens it immutable (RFC 3986: '%', '?' and '#' escaped).
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) uri += c == '%' ? "%25" : c == '?' ? "%3f" : c == '#' ? "%23" : std::string(1, c);
  return uri + "?immutable=1";
}

class SqliteStore : public StoreConnection {
 public:
  // Opens `path` with SQLite's `flags`; `name` is the path or its URI.
  SqliteStore(const std::string& path, const std::string& name, int flags) : path_(path) {
    if (const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr); rc != SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      close_on_error([&] { fail_on(path, db_, rc, "cannot open: " + msg); });
    }
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  }
  ~SqliteStore() override { sqlite3_close(db_); }
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // Turns the file to WAL (readers never block the writer); the first read of a damaged file
  // fails here.
  void use_wal() {
    close_on_error([&] { exec("PRAGMA journal_mode=WAL"); });
  }

  const std::string& label() const override { return path_; }
  StoreKind kind() const override { return StoreKind::sqlite; }
  std::vector<std::string> tables() override {
    std::vector<std::string> out;
    query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", {},
          [&](const SqlRow& r) { out.push_back(r.text(0)); });
    return out;
  }
  void exec(const std::string& sql) override {
    std::string error;
    if (const int rc = exec_waiting(db_, sql.c_str(), &error); rc != SQLITE_OK) fail_on(path_, db_, rc, error);
  }
  void query(const std::string& sql, const std::vector<SqlValue>& params, const SqlRowVisitor& each) override {
    Statement s(db_, path_, sql);
    s.bind(params);
    while (s.step())
      if (each) each(s);
  }
  void insert_rows(const std::string& table, const std::vector<std::string>& columns,
                   const std::vector<std::vector<SqlValue>>& rows) override {
    std::string marks;
    for (size_t i = 1; i <= columns.size(); ++i) marks += fmt::format("{}${}", i > 1 ? ", " : "", i);
    Statement s(db_, path_, fmt::format("INSERT INTO {} ({}) VALUES ({})", table, fmt::join(columns, ", "), marks));
    for (const auto& row : rows) {
      s.bind(row);
      s.step();
    }
  }
  void begin_write() override { exec("BEGIN IMMEDIATE"); }  // waits for another writer up to the busy timeout
  void begin_schema_change() override { begin_write(); }
  void begin_read() override { exec("BEGIN"); }
  void commit() override { exec("COMMIT"); }
  void rollback() noexcept override { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }

 private:
  template <typename F>
  void close_on_error(F&& f) {
    try {
      f();
    } catch (...) {
      sqlite3_close(db_);
      db_ = nullptr;
      throw;
    }
  }
  std::string path_;
  sqlite3* db_ = nullptr;
};

void refuse_shared_file_system(const std::string& path) {
  if (const std::string fs = shared_file_system(folder_of(path)); !fs.empty())
    fail(ExitCode::precondition,
         "history {}: on {}, a shared file system where SQLite's locking is not safe for jobs appending from several "
         "nodes (the file can be corrupted); keep an SQLite history on a local disk, or give a PostgreSQL URL "
         "(--db postgresql://...; docs/guides/fleet.md)",
         path, fs);
}

}  // namespace

std::string shared_file_system_name(unsigned long magic) {
  switch (magic) {
    case 0x6969: return "NFS";
    case 0xFF534D42:
    case 0xFE534D42:
    case 0x517B: return "SMB/CIFS";
    case 0x0BD00BD0: return "Lustre";
    case 0x47504653: return "GPFS (Spectrum Scale)";
    case 0x19830326: return "BeeGFS";
    case 0x00C36400: return "CephFS";
    case 0x5346414F: return "AFS";
    default: return "";
  }
}

std::unique_ptr<StoreConnection> open_sqlite_store(const std::string& path, HistoryAccess access) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (access == HistoryAccess::read) {
    if (!fs::exists(path, ec))
      fail(ExitCode::usage,
           "history {}: no such file; give an existing history, or start one with `ccbench history "
           "--db {} --add RESULTS` or a run with --db",
           path, path);
    const bool immutable = frozen(path);
    return std::make_unique<SqliteStore>(path, immutable ? immutable_uri(path) : path,
                                         SQLITE_OPEN_READONLY | (immutable ? SQLITE_OPEN_URI : 0));
  }
  if (const std::string why = unwritable(path); !why.empty())
    fail(ExitCode::usage, "history {}: cannot write: {}", path, why);
  refuse_shared_file_system(path);
  // Another program's file is refused before anything is written to it (not even WAL mode):
  // read-only first, then for writing.
  if (fs::exists(path, ec) && fs::file_size(path, ec) > 0) {
    SqliteStore check(path, path, SQLITE_OPEN_READONLY);
    stored_schema_version(check);
  }
  auto store = std::make_unique<SqliteStore>(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  store->use_wal();
  return store;
}

void probe_sqlite_store(const std::string& path) {
  if (const std::string why = unwritable(path); !why.empty())
    fail(ExitCode::usage, "history {}: cannot write: {}", path, why);
  refuse_shared_file_system(path);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;
  // Reads the schema without writing: fails on a file that is not a database or not a history;
  // a store being created by another job (no tables yet) is fine, and one another job holds is
  // waited for (exec_waiting).
  SqliteStore store(path, path, SQLITE_OPEN_READONLY);
  stored_schema_version(store);
}

}  // namespace ccbench
