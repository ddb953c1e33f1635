#include "results/history.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "results/format.h"

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

// A prepared statement, finalized however the caller leaves.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, const char* sql) : path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
      fail(ExitCode::precondition, "history {}: {}", path, sqlite3_errmsg(db));
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
  bool step() {  // true: a row is ready
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(ExitCode::precondition, "history {}: {}", path_, sqlite3_errmsg(sqlite3_db_handle(s_)));
  }
  std::string text(int col) const {
    const auto* t = sqlite3_column_text(s_, col);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  long long integer(int col) const { return sqlite3_column_int64(s_, col); }

 private:
  sqlite3_stmt* s_ = nullptr;
  std::string path_;
};

bool busy(int rc) { return rc == SQLITE_BUSY || rc == SQLITE_LOCKED; }

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

[[noreturn]] void fail_on(const std::string& path, int rc, const std::string& error) {
  if (busy(rc))
    fail(ExitCode::precondition, "history {}: {}: another job has held it for {} s; try again when it is done", path,
         error, kBusyTimeoutMs / 1000);
  fail(ExitCode::precondition,
       "history {}: {} (a damaged or foreign file: move it away; the results folders of the runs are intact)", path,
       error);
}

void exec(sqlite3* db, const std::string& path, const char* sql) {
  std::string error;
  const int rc = exec_waiting(db, sql, &error);
  if (rc != SQLITE_OK) fail_on(path, rc, error);
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
  r.exit_code = static_cast<int>(s.integer(7));
  r.rows = static_cast<int>(s.integer(8));
  return r;
}

constexpr const char* kRunColumns =
    "runs.id, started_utc, host, kind, git_hash, command, verdict, exit_code, "
    "(SELECT COUNT(*) FROM rows WHERE rows.run_id = runs.id)";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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

std::string trend_table(const std::vector<TrendPoint>& points) {
  std::string s = fmt::format("# {:>4}  {:<20}  {:<12}  {:<44}  {:>9}  {:>12}  {:>14}  {:>7}  {}\n", "run",
                              "started (UTC)", "host", "case", "size", "time_median", "busbw_median", "time_cv", "status");
  for (const TrendPoint& p : points) {
    const RunRecord& r = p.row;
    const std::string what = fmt::format("{} {}/{} {} {}", r.collective, r.impl, r.transport, r.dtype,
                                         r.in_place ? "in-place" : "out-of-place");
    s += fmt::format("  {:>4}  {:<20}  {:<12}  {:<44}  {:>9}  {:>9.3f} us  {:>9.2f} GB/s  {:>7.3f}  {}\n", p.run.id,
                     p.run.started_utc, p.run.host, what, human_size(r.bytes), r.time_median_us, r.busbw_median_gbps,
                     r.time_cv, row_status_name(r.status));
  }
  return s;
}

History::History(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    fail(ExitCode::precondition, "history {}: cannot open: {}", path, msg);
  }
  try {
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    exec(db_, path_, "PRAGMA journal_mode=WAL");  // readers never block the writer; the first read of a damaged file fails here
    exec(db_, path_, "BEGIN IMMEDIATE");
    exec(db_, path_, kSchema);
    {
      Statement s(db_, path_, "SELECT value FROM meta WHERE key = 'schema_version'");
      if (s.step()) {
        const int v = std::atoi(s.text(0).c_str());
        if (v > kHistorySchemaVersion)
          fail(ExitCode::precondition, "history {}: schema version {} is newer than this ccbench reads ({})", path_, v,
               kHistorySchemaVersion);
      } else {
        Statement put(db_, path_, "INSERT INTO meta VALUES ('schema_version', ?)");
        put.bind(1, std::to_string(kHistorySchemaVersion)).step();
      }
    }
    exec(db_, path_, "COMMIT");
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

History::~History() { sqlite3_close(db_); }

void History::probe(const std::string& path) {
  if (!std::filesystem::exists(path)) return;
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::string error = rc == SQLITE_OK ? "" : sqlite3_errmsg(db);
  if (rc != SQLITE_OK) {
    sqlite3_close(db);
    fail_on(path, rc, error);
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // Reads the schema: fails on a file that is not a database; a store being created by another
  // job (no tables yet) is fine, and one another job holds is waited for.
  const int read = exec_waiting(db, "SELECT COUNT(*) FROM sqlite_master", &error);
  sqlite3_close(db);
  if (read != SQLITE_OK) fail_on(path, read, error);
}

long long History::append(const Json& context, const std::vector<RunRecord>& rows, const std::string& verdict,
                          int exit_code) {
  exec(db_, path_, "BEGIN IMMEDIATE");  // waits for another writer up to the busy timeout
  try {
    Statement run(db_, path_,
                  "INSERT INTO runs (started_utc, host, kind, git_hash, command, verdict, exit_code, context) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    run.bind(1, text_of(context, "started_utc")).bind(2, run_host(context)).bind(3, node_kind(context));
    run.bind(4, text_of(context, "git_hash")).bind(5, text_of(context, "command_line")).bind(6, verdict);
    run.bind(7, static_cast<long long>(exit_code)).bind(8, context.dump()).step();
    const long long id = sqlite3_last_insert_rowid(db_);
    for (const RunRecord& r : rows) {
      Statement one(db_, path_,
                    "INSERT INTO rows (run_id, collective, impl, transport, dtype, bytes, status, record) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
      one.bind(1, id).bind(2, r.collective).bind(3, r.impl).bind(4, r.transport).bind(5, r.dtype);
      one.bind(6, static_cast<long long>(r.bytes)).bind(7, std::string(row_status_name(r.status)));
      one.bind(8, to_json(r).dump()).step();
    }
    exec(db_, path_, "COMMIT");
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
  while (s.step()) out.push_back({run_from(s), record_from_json(Json::parse(s.text(9)))});
  return out;
}

std::vector<RunRecord> History::fleet_median(const std::string& kind, const std::string& exclude_host,
                                             int* hosts_used) const {
  // The latest run of every other host of this kind.
  Statement s(db_, path_,
              "SELECT r.record FROM rows r WHERE r.status = 'ok' AND r.run_id IN ("
              " SELECT MAX(id) FROM runs WHERE kind = ?1 AND host != ?2 GROUP BY host)");
  s.bind(1, kind).bind(2, exclude_host);
  Statement count(db_, path_, "SELECT COUNT(DISTINCT host) FROM runs WHERE kind = ?1 AND host != ?2");
  count.bind(1, kind).bind(2, exclude_host);
  count.step();
  if (hosts_used) *hosts_used = static_cast<int>(count.integer(0));
  std::map<std::string, std::vector<RunRecord>> by_case;  // case and size -> the hosts' rows
  std::vector<std::string> order;
  while (s.step()) {
    RunRecord r = record_from_json(Json::parse(s.text(0)));
    const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", r.collective, r.impl,
                                        r.transport, r.dtype, r.op, r.mode, r.in_place, r.group, r.bytes);
    if (!by_case.count(key)) order.push_back(key);
    by_case[key].push_back(std::move(r));
  }
  std::vector<RunRecord> out;
  for (const std::string& key : order) {
    const auto& rs = by_case[key];
    RunRecord m = rs.front();
    auto med = [&](double RunRecord::*f) {
      std::vector<double> v;
      for (const RunRecord& r : rs) v.push_back(r.*f);
      return median(v);
    };
    for (double RunRecord::*f : {&RunRecord::time_avg_us, &RunRecord::time_median_us, &RunRecord::time_min_us,
                                 &RunRecord::time_p95_us, &RunRecord::time_max_us, &RunRecord::time_cv,
                                 &RunRecord::algbw_gbps, &RunRecord::busbw_gbps, &RunRecord::busbw_median_gbps})
      m.*f = med(f);
    out.push_back(m);
  }
  return out;
}

}  // namespace ccbench
