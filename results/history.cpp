#include "results/history.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "results/csv_reader.h"
#include "results/format.h"
#include "results/row_check.h"
#include "results/stats.h"

namespace ccbench {

namespace {

const char* const kSchema = R"(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY, started_utc TEXT, host TEXT, kind TEXT, git_hash TEXT, command TEXT,
  verdict TEXT, exit_code INTEGER, context TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rows (
  run_id INTEGER NOT NULL REFERENCES runs(id), collective TEXT, impl TEXT, transport TEXT, dtype TEXT,
  bytes INTEGER, status TEXT, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rows_case ON rows (collective, impl, transport, dtype, bytes);
CREATE INDEX IF NOT EXISTS runs_kind ON runs (kind, host);
)";

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

// A prepared statement, finalized however the caller leaves.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, const char* sql) : path_(path) {
    if (const int rc = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); rc != SQLITE_OK)
      fail_on(path, db, rc, sqlite3_errmsg(db));
  }
  ~Statement() { sqlite3_finalize(s_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), -1, SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, long long v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Statement& bind(int i, std::optional<int> v) {
    if (v) sqlite3_bind_int64(s_, i, *v);
    else sqlite3_bind_null(s_, i);
    return *this;
  }
  bool step() {  // true: a row is ready
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail_on(path_, sqlite3_db_handle(s_), rc, sqlite3_errmsg(sqlite3_db_handle(s_)));
  }
  std::string text(int col) const {
    const auto* t = sqlite3_column_text(s_, col);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  long long integer(int col) const { return sqlite3_column_int64(s_, col); }
  bool null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }

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

void exec(sqlite3* db, const std::string& path, const char* sql) {
  std::string error;
  const int rc = exec_waiting(db, sql, &error);
  if (rc != SQLITE_OK) fail_on(path, db, rc, error);
}

std::string text_of(const Json& c, const char* key) {
  return c.contains(key) && c[key].is_string() ? c[key].get<std::string>() : "";
}

HistoryRun run_from(const Statement& s) {  // columns: id, started, host, kind, git, command, verdict, exit, rows
  HistoryRun r;
  r.id = s.integer(0);
  r.started_utc = s.text(1);
  r.host = s.text(2);
  r.kind = s.text(3);
  r.git_hash = s.text(4);
  r.command = s.text(5);
  r.verdict = s.text(6);
  if (!s.null(7)) r.exit_code = static_cast<int>(s.integer(7));
  r.rows = static_cast<int>(s.integer(8));
  return r;
}

constexpr const char* kRunColumns =
    "runs.id, started_utc, host, kind, git_hash, command, verdict, exit_code, "
    "(SELECT COUNT(*) FROM rows WHERE rows.run_id = runs.id)";

}  // namespace

std::string run_host(const Json& c) {
  if (c.contains("ranks_detail") && c["ranks_detail"].is_array() && !c["ranks_detail"].empty())
    return text_of(c["ranks_detail"][0], "host");
  return "?";
}

std::string node_kind(const Json& c) {
  std::string model;
  if (c.contains("nodes_detail") && c["nodes_detail"].is_array() && !c["nodes_detail"].empty()) {
    const Json& node = c["nodes_detail"][0].value("node", Json::object());
    const Json& gpus = node.value("gpus", Json::object());
    if (gpus.value("available", false) && gpus.contains("gpus") && !gpus["gpus"].empty())
      model = gpus["gpus"][0].value("name", "");
  }
  const std::string device = text_of(c, "device");
  const int per_node = c.value("ranks_per_node", 0);
  return fmt::format("{}{} x{}", device.empty() ? "?" : device, model.empty() ? "" : " " + model, per_node);
}

std::string runs_table(const std::vector<HistoryRun>& runs) {
  std::string s = fmt::format("# {:>4}  {:<20}  {:<12}  {:<22}  {:<18}  {:>5}  {}\n", "run", "started (UTC)", "host",
                              "kind", "commit", "rows", "verdict");
  for (const HistoryRun& r : runs)
    s += fmt::format("  {:>4}  {:<20}  {:<12}  {:<22}  {:<18}  {:>5}  {}\n", r.id, r.started_utc, r.host, r.kind,
                     r.git_hash, r.rows, r.verdict);
  return s;
}

namespace {

// A row's status, or what makes it damaged (a stored row is never judged as measured then).
std::string status_text(const RunRecord& r) {
  const std::string damage = row_damage(r);
  return damage.empty() ? std::string(row_status_name(r.status)) : "DAMAGED: " + damage;
}

}  // namespace

std::string trend_table(const std::vector<TrendPoint>& points) {
  std::string s = fmt::format("# {:>4}  {:<20}  {:<12}  {:<44}  {:>9}  {:>12}  {:>14}  {:>7}  {}\n", "run",
                              "started (UTC)", "host", "case", "size", "time_median", "busbw_median", "time_cv", "status");
  for (const TrendPoint& p : points) {
    const RunRecord& r = p.row;
    const std::string what = fmt::format("{} {}/{} {} {}{}", r.collective, r.impl, r.transport, r.dtype,
                                         r.in_place ? "in-place" : "out-of-place",
                                         r.cycle > 1 ? fmt::format(" cycle {}", r.cycle) : "");
    s += fmt::format("  {:>4}  {:<20}  {:<12}  {:<44}  {:>9}  {:>9.3f} us  {:>9.2f} GB/s  {:>7.3f}  {}\n", p.run.id,
                     p.run.started_utc, p.run.host, what, human_size(r.bytes), r.time_median_us, r.busbw_median_gbps,
                     r.time_cv, status_text(r));
  }
  return s;
}

namespace {

// Why `path` cannot be written or created, in the system's words; "" when it can. SQLite also
// writes DB-wal and DB-shm beside the file, so the folder must be writable too.
std::string unwritable(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "it is a folder";
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0) return std::strerror(errno);
  if (!fs::is_directory(dir, ec)) return fmt::format("its folder {} does not exist", dir.string());
  if (::access(dir.c_str(), W_OK) != 0)
    return fmt::format("its folder {}: {} (SQLite writes its -wal and -shm files there)", dir.string(),
                       std::strerror(errno));
  return "";
}

// A store that no one can be writing to and this process cannot coordinate readers of: its
// folder is not writable here and SQLite's shared-memory file (DB-shm, which a WAL store's
// readers need and every open connection keeps) does not exist. SQLite then opens it only as
// immutable, which is what it is to us.
bool frozen(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  std::error_code ec;
  return !fs::exists(path + "-shm", ec) && ::access(dir.c_str(), W_OK) != 0;
}

// `path` as an SQLite URI that opens it immutable (RFC 3986: '%', '?' and '#' escaped).
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) uri += c == '%' ? "%25" : c == '?' ? "%3f" : c == '#' ? "%23" : std::string(1, c);
  return uri + "?immutable=1";
}

// How many of ccbench's tables (meta, runs, rows) and how many tables in all a store holds.
std::pair<long long, long long> tables_of(sqlite3* db, const std::string& path) {
  Statement s(db, path,
              "SELECT COUNT(CASE WHEN name IN ('meta', 'runs', 'rows') THEN 1 END), COUNT(*) FROM sqlite_master "
              "WHERE type = 'table'");
  s.step();
  return {s.integer(0), s.integer(1)};
}

[[noreturn]] void fail_foreign(const std::string& path) {
  fail(ExitCode::precondition,
       "history {}: not a ccbench history (an SQLite file without its tables): move it away or give another --db", path);
}

// The schema version of an open store, checked.
void check_schema(sqlite3* db, const std::string& path) {
  if (tables_of(db, path).first != 3) fail_foreign(path);
  Statement s(db, path, "SELECT value FROM meta WHERE key = 'schema_version'");
  const int v = s.step() ? std::atoi(s.text(0).c_str()) : 0;
  if (v > kHistorySchemaVersion)
    fail(ExitCode::precondition, "history {}: schema version {} is newer than this ccbench reads ({})", path, v,
         kHistorySchemaVersion);
}

// Creates the tables of a new store (in one transaction with its schema version); an SQLite
// file holding other tables is someone else's and is left alone.
void create_schema(sqlite3* db, const std::string& path) {
  const auto [ours, all] = tables_of(db, path);
  if (all > ours) fail_foreign(path);
  if (ours == 3) return;
  exec(db, path, "BEGIN IMMEDIATE");
  exec(db, path, kSchema);
  {
    Statement s(db, path, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (!s.step()) Statement(db, path, "INSERT INTO meta VALUES ('schema_version', ?)")
                       .bind(1, std::to_string(kHistorySchemaVersion)).step();
  }
  exec(db, path, "COMMIT");
}

}  // namespace

History::History(const std::string& path, HistoryAccess access) : path_(path) {
  const bool append = access == HistoryAccess::append;
  if (!append && !std::filesystem::exists(path))
    fail(ExitCode::usage, "history {}: no such file; give an existing history, or start one with `ccbench history "
         "--db {} --add RESULTS` or a run with --db", path, path);
  if (const std::string why = append ? unwritable(path) : ""; !why.empty())
    fail(ExitCode::usage, "history {}: cannot write: {}", path, why);
  const int flags = append ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                           : SQLITE_OPEN_READONLY | (frozen(path) ? SQLITE_OPEN_URI : 0);
  const std::string name = flags & SQLITE_OPEN_URI ? immutable_uri(path) : path;
  if (const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr); rc != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    try {
      fail_on(path, db_, rc, "cannot open: " + msg);
    } catch (...) {
      sqlite3_close(db_);
      db_ = nullptr;
      throw;
    }
  }
  try {
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    if (append) {
      exec(db_, path_, "PRAGMA journal_mode=WAL");  // readers never block the writer; the first read of a damaged file fails here
      create_schema(db_, path_);
    }
    check_schema(db_, path_);
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

History::~History() { sqlite3_close(db_); }

void History::probe(const std::string& path) {
  if (const std::string why = unwritable(path); !why.empty())
    fail(ExitCode::usage, "history {}: cannot write: {}", path, why);
  if (!std::filesystem::exists(path)) return;
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::string error = rc == SQLITE_OK ? "" : sqlite3_errmsg(db);
  if (rc != SQLITE_OK) {
    sqlite3_close(db);
    fail_on(path, nullptr, rc, error);
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // Reads the schema: fails on a file that is not a database; a store being created by another
  // job (no tables yet) is fine, and one another job holds is waited for.
  const int read = exec_waiting(db, "SELECT COUNT(*) FROM sqlite_master", &error);
  const int os = sqlite3_system_errno(db);
  sqlite3_close(db);
  if (read != SQLITE_OK) {
    if (os) error += fmt::format(": {}", std::strerror(os));
    fail_on(path, nullptr, read, error);
  }
}

namespace {

// A stored row read back; a record that no longer parses is a damaged store.
RunRecord stored_row(const std::string& path, long long run_id, const std::string& record) {
  try {
    return record_from_json(Json::parse(record));
  } catch (const std::exception& e) {
    fail(ExitCode::precondition,
         "history {}: run {} holds a row that cannot be read ({}): a damaged file; move it away", path, run_id,
         e.what());
  }
}

// A row as results.csv holds it (6 significant digits): the same run reads the same whether it
// was appended by the run itself or added later from its results folder.
std::string row_text(const RunRecord& r) { return csv_line(to_csv_fields(sealed(r))); }

// The id of the run of `context` with these rows when the store holds it already: the same start
// time, command, first host and commit, and the same rows.
std::optional<long long> stored_run(sqlite3* db, const std::string& path, const Json& context,
                                    const std::vector<RunRecord>& rows) {
  Statement same(db, path,
                 "SELECT id FROM runs WHERE started_utc = ? AND command = ? AND host = ? AND git_hash = ? ORDER BY id");
  same.bind(1, text_of(context, "started_utc")).bind(2, text_of(context, "command_line"));
  same.bind(3, run_host(context)).bind(4, text_of(context, "git_hash"));
  std::vector<std::string> wanted;
  for (const RunRecord& r : rows) wanted.push_back(row_text(r));
  while (same.step()) {
    const long long id = same.integer(0);
    Statement stored(db, path, "SELECT record FROM rows WHERE run_id = ? ORDER BY rowid");
    stored.bind(1, id);
    std::vector<std::string> have;
    while (stored.step()) have.push_back(row_text(stored_row(path, id, stored.text(0))));
    if (have == wanted) return id;
  }
  return std::nullopt;
}

}  // namespace

long long History::append(const Json& context, const std::vector<RunRecord>& rows, const std::string& verdict,
                          std::optional<int> exit_code, bool* already_stored) {
  exec(db_, path_, "BEGIN IMMEDIATE");  // waits for another writer up to the busy timeout
  try {
    if (const auto id = stored_run(db_, path_, context, rows)) {
      exec(db_, path_, "COMMIT");
      if (already_stored) *already_stored = true;
      return *id;
    }
    Statement run(db_, path_,
                  "INSERT INTO runs (started_utc, host, kind, git_hash, command, verdict, exit_code, context) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    run.bind(1, text_of(context, "started_utc")).bind(2, run_host(context)).bind(3, node_kind(context));
    run.bind(4, text_of(context, "git_hash")).bind(5, text_of(context, "command_line")).bind(6, verdict);
    run.bind(7, exit_code).bind(8, context.dump()).step();
    const long long id = sqlite3_last_insert_rowid(db_);
    for (const RunRecord& in : rows) {
      const RunRecord r = sealed(in);
      Statement one(db_, path_,
                    "INSERT INTO rows (run_id, collective, impl, transport, dtype, bytes, status, record) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
      one.bind(1, id).bind(2, r.collective).bind(3, r.impl).bind(4, r.transport).bind(5, r.dtype);
      one.bind(6, static_cast<long long>(r.bytes)).bind(7, std::string(row_status_name(r.status)));
      one.bind(8, to_json(r).dump()).step();
    }
    exec(db_, path_, "COMMIT");
    if (already_stored) *already_stored = false;
    return id;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<HistoryRun> History::runs(const std::string& host) const {
  Statement s(db_, path_,
              fmt::format("SELECT {} FROM runs WHERE ?1 = '' OR host = ?1 ORDER BY id", kRunColumns).c_str());
  s.bind(1, host);
  std::vector<HistoryRun> out;
  while (s.step()) out.push_back(run_from(s));
  return out;
}

namespace {

// Per case and size, the rows of one row each of several hosts.
std::string fleet_key(const RunRecord& r) {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", r.collective, r.impl, r.transport, r.dtype,
                     r.op, r.mode, r.in_place, r.group, r.bytes);
}

// The median row of several hosts' rows of one case and size: median times and spreads, and the
// bandwidths a run computes from them (bytes / time, times the rows' bus factor), so that the
// row's figures agree with each other.
RunRecord median_row(const std::vector<RunRecord>& rs) {
  RunRecord m = rs.front();
  auto med = [&](double RunRecord::*f) {
    std::vector<double> v;
    for (const RunRecord& r : rs) v.push_back(r.*f);
    return median_of(std::move(v));
  };
  for (double RunRecord::*f : {&RunRecord::time_avg_us, &RunRecord::time_median_us, &RunRecord::time_min_us,
                               &RunRecord::time_p95_us, &RunRecord::time_max_us, &RunRecord::time_cv})
    m.*f = med(f);
  const double factor = m.algbw_gbps > 0 ? m.busbw_gbps / m.algbw_gbps : 0;
  const double bytes = static_cast<double>(m.bytes);
  m.algbw_gbps = gigabytes_per_second(bytes, m.time_avg_us);
  m.busbw_gbps = m.algbw_gbps * factor;
  m.busbw_median_gbps = gigabytes_per_second(bytes, m.time_median_us) * factor;
  return m;
}

}  // namespace

std::vector<TrendPoint> History::trend(const CaseFilter& f) const {
  Statement s(db_, path_,
              fmt::format("SELECT {}, rows.record FROM rows JOIN runs ON runs.id = rows.run_id "
                          "WHERE (?1 = '' OR collective = ?1) AND (?2 = '' OR impl = ?2) AND (?3 = '' OR transport = ?3) "
                          "AND (?4 = '' OR dtype = ?4) AND (?5 = 0 OR bytes = ?5) AND (?6 = '' OR host = ?6) "
                          "ORDER BY runs.id, rows.rowid",
                          kRunColumns)
                  .c_str());
  s.bind(1, f.collective).bind(2, f.impl).bind(3, f.transport).bind(4, f.dtype);
  s.bind(5, static_cast<long long>(f.bytes)).bind(6, f.host);
  std::vector<TrendPoint> out;
  while (s.step()) {
    HistoryRun run = run_from(s);
    out.push_back({run, stored_row(path_, run.id, s.text(9))});
  }
  return out;
}

std::vector<RunRecord> History::fleet_median(const std::string& kind, const std::string& exclude_host, int* hosts_used,
                                             int* damaged_left_out) const {
  // The latest run of every other host of this kind.
  Statement s(db_, path_,
              "SELECT r.run_id, r.record FROM rows r WHERE r.status = 'ok' AND r.run_id IN ("
              " SELECT MAX(id) FROM runs WHERE kind = ?1 AND host != ?2 GROUP BY host)");
  s.bind(1, kind).bind(2, exclude_host);
  Statement count(db_, path_, "SELECT COUNT(DISTINCT host) FROM runs WHERE kind = ?1 AND host != ?2");
  count.bind(1, kind).bind(2, exclude_host);
  count.step();
  if (hosts_used) *hosts_used = static_cast<int>(count.integer(0));
  if (damaged_left_out) *damaged_left_out = 0;
  std::map<std::string, std::vector<RunRecord>> by_case;  // case and size -> the hosts' rows
  std::vector<std::string> order;
  while (s.step()) {
    RunRecord r = stored_row(path_, s.integer(0), s.text(1));
    if (!row_damage(r).empty()) {
      if (damaged_left_out) ++*damaged_left_out;
      continue;
    }
    const std::string key = fleet_key(r);
    if (!by_case.count(key)) order.push_back(key);
    by_case[key].push_back(std::move(r));
  }
  std::vector<RunRecord> out;
  for (const std::string& key : order) out.push_back(median_row(by_case[key]));
  return out;
}

}  // namespace ccbench
