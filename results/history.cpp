#include "results/history.h"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/size.h"
#include "results/format.h"
#include "results/row_check.h"
#include "results/row_key.h"
#include "results/stats.h"
#include "results/store_schema.h"

namespace ccbench {

namespace {

HistoryRun run_from(const SqlRow& s) {  // columns: id, started, host, kind, git, command, verdict, exit, rows
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
    "runs.id, started_utc, host, kind, git_hash, command, verdict, exit_code, row_count";

// A stored row read back; a record that no longer parses is a damaged store.
RunRecord stored_row(const std::string& store, long long run_id, const std::string& record) {
  try {
    return record_from_json(Json::parse(record));
  } catch (const std::exception& e) {
    fail(ExitCode::precondition,
         "history {}: run {} holds a row that cannot be read ({}): a damaged store; move it away", store, run_id,
         e.what());
  }
}

}  // namespace

std::string run_host(const Json& c) {
  if (c.contains("ranks_detail") && c["ranks_detail"].is_array() && !c["ranks_detail"].empty())
    return json_text(c["ranks_detail"][0], "host");
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
  const std::string device = json_text(c, "device");
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
  std::string s =
      fmt::format("# {:>4}  {:<20}  {:<12}  {:<44}  {:>9}  {:>12}  {:>14}  {:>7}  {}\n", "run", "started (UTC)", "host",
                  "case", "size", "time_median", "busbw_median", "time_cv", "status");
  for (const TrendPoint& p : points) {
    const RunRecord& r = p.row;
    const std::string what =
        fmt::format("{} {}/{} {} {}{}", r.collective, r.impl, r.transport, r.dtype,
                    r.in_place ? "in-place" : "out-of-place", r.cycle > 1 ? fmt::format(" cycle {}", r.cycle) : "");
    s += fmt::format("  {:>4}  {:<20}  {:<12}  {:<44}  {:>9}  {:>9.3f} us  {:>9.2f} GB/s  {:>7.3f}  {}\n", p.run.id,
                     p.run.started_utc, p.run.host, what, human_size(r.bytes), r.time_median_us, r.busbw_median_gbps,
                     r.time_cv, status_text(r));
  }
  return s;
}

History::History(const std::string& db, HistoryAccess access) : store_(open_store(db, access)) {
  if (access == HistoryAccess::append) {
    migrate_store(*store_);
    return;
  }
  const int version = stored_schema_version(*store_);
  if (version == 0)
    fail(ExitCode::usage,
         "history {}: holds no ccbench history yet; start one with `ccbench history --db {} --add "
         "RESULTS` or a run with --db",
         label(), label());
  if (version == kStoreSchemaVersion) return;
  try {  // an older store is upgraded once, by whoever opens it first
    store_ = open_store(db, HistoryAccess::append);
  } catch (const Error& e) {
    throw Error(e.code(), fmt::format("{} (its schema version {} must be upgraded to {} before this ccbench reads it, "
                                      "which needs write access: open it once where it can be written)",
                                      e.what(), version, kStoreSchemaVersion));
  }
  migrate_store(*store_);
}

History::~History() = default;

void History::probe(const std::string& db) {
  if (!is_store_url(db)) probe_sqlite_store(db);
}

namespace {

// The values of a run's rows for the rows table (run_id set once the run has its id).
std::vector<std::vector<SqlValue>> row_values(const std::vector<RunRecord>& rows) {
  std::vector<std::vector<SqlValue>> out;
  out.reserve(rows.size());
  long long seq = 0;
  for (const RunRecord& in : rows) {
    const RunRecord r = sealed(in);
    out.push_back({0LL, seq++, r.collective, r.impl, r.transport, r.dtype, static_cast<long long>(r.bytes),
                   std::string(row_status_name(r.status)), to_json(r).dump()});
  }
  return out;
}

const std::vector<std::string> kRowColumns = {"run_id", "seq",   "collective", "impl",  "transport",
                                              "dtype",  "bytes", "status",     "record"};

}  // namespace

long long History::append(const Json& context, const std::vector<RunRecord>& rows, const std::string& verdict,
                          std::optional<int> exit_code, bool* already_stored) {
  const std::string started = json_text(context, "started_utc"), host = run_host(context);
  const std::string fingerprint =
      run_fingerprint(started, json_text(context, "command_line"), host, json_text(context, "git_hash"), rows);
  std::vector<std::vector<SqlValue>> values = row_values(rows);  // before the transaction: it holds the store
  StoreConnection& s = *store_;
  s.begin_write();
  try {
    long long id = 0;
    bool added = false;
    s.query(
        "INSERT INTO runs (started_utc, host, kind, git_hash, command, verdict, exit_code, context, fingerprint, "
        "row_count) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (started_utc, host, fingerprint) "
        "DO NOTHING RETURNING id",
        {started, host, node_kind(context), json_text(context, "git_hash"), json_text(context, "command_line"), verdict,
         exit_code ? SqlValue(static_cast<long long>(*exit_code)) : SqlValue(nullptr), context.dump(), fingerprint,
         static_cast<long long>(rows.size())},
        [&](const SqlRow& r) {
          id = r.integer(0);
          added = true;
        });
    if (added) {
      for (auto& v : values) v[0] = id;
      s.insert_rows("rows", kRowColumns, values);
    } else {  // stored before (by another job, at this very moment too: the insert waited for it)
      s.query("SELECT id FROM runs WHERE started_utc = $1 AND host = $2 AND fingerprint = $3",
              {started, host, fingerprint}, [&](const SqlRow& r) { id = r.integer(0); });
    }
    s.commit();
    if (already_stored) *already_stored = !added;
    return id;
  } catch (...) {
    s.rollback();
    throw;
  }
}

std::vector<HistoryRun> History::runs(const std::string& host) const {
  std::vector<HistoryRun> out;
  store_->query(fmt::format("SELECT {} FROM runs {}ORDER BY id", kRunColumns, host.empty() ? "" : "WHERE host = $1 "),
                host.empty() ? std::vector<SqlValue>{} : std::vector<SqlValue>{host},
                [&](const SqlRow& r) { out.push_back(run_from(r)); });
  return out;
}

namespace {

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
  // Only the fields given, as plain equalities: "($1 = '' OR collective = $1)" would keep SQLite
  // from its index on the case and read every row of the store (1.5 s instead of 0.34 s over
  // 1,000 runs; evidence cpu2core-20261202-store-speed).
  std::vector<std::string> where;
  std::vector<SqlValue> params;
  auto equal = [&](const char* column, SqlValue v) {
    params.push_back(std::move(v));
    where.push_back(fmt::format("{} = ${}", column, params.size()));
  };
  for (const auto& [column, value] : {std::pair{"collective", &f.collective},
                                      {"impl", &f.impl},
                                      {"transport", &f.transport},
                                      {"dtype", &f.dtype},
                                      {"host", &f.host}})
    if (!value->empty()) equal(column, *value);
  if (f.bytes) equal("bytes", static_cast<long long>(f.bytes));
  const std::string sql =
      fmt::format("SELECT {}, rows.record FROM rows JOIN runs ON runs.id = rows.run_id {}{} ORDER BY runs.id, rows.seq",
                  kRunColumns, where.empty() ? "" : "WHERE ", fmt::join(where, " AND "));
  std::vector<TrendPoint> out;
  store_->query(sql, params, [&](const SqlRow& r) {
    HistoryRun run = run_from(r);
    RunRecord row = stored_row(label(), run.id, r.text(9));
    out.push_back({std::move(run), std::move(row)});
  });
  return out;
}

std::vector<RunRecord> History::fleet_median(const std::string& kind, const std::string& exclude_host, int* hosts_used,
                                             int* damaged_left_out) const {
  std::map<RowKey, std::vector<RunRecord>> by_case;  // case and size -> the hosts' rows
  std::vector<RowKey> order;
  int hosts = 0, damaged = 0;
  store_->begin_read();  // the hosts counted and their rows from one snapshot
  try {
    store_->query("SELECT COUNT(DISTINCT host) FROM runs WHERE kind = $1 AND host != $2", {kind, exclude_host},
                  [&](const SqlRow& r) { hosts = static_cast<int>(r.integer(0)); });
    // The latest run of every other host of this kind.
    store_->query(
        "SELECT r.run_id, r.record FROM rows AS r WHERE r.status = 'ok' AND r.run_id IN ("
        " SELECT MAX(id) FROM runs WHERE kind = $1 AND host != $2 GROUP BY host) ORDER BY r.run_id, r.seq",
        {kind, exclude_host}, [&](const SqlRow& row) {
          RunRecord r = stored_row(label(), row.integer(0), row.text(1));
          if (!row_damage(r).empty()) {
            ++damaged;
            return;
          }
          const RowKey key = fleet_key(r);
          if (!by_case.count(key)) order.push_back(key);
          by_case[key].push_back(std::move(r));
        });
    store_->commit();
  } catch (...) {
    store_->rollback();
    throw;
  }
  if (hosts_used) *hosts_used = hosts;
  if (damaged_left_out) *damaged_left_out = damaged;
  std::vector<RunRecord> out;
  for (const RowKey& key : order) out.push_back(median_row(by_case[key]));
  return out;
}

}  // namespace ccbench
