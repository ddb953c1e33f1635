// The PostgreSQL kind of results store (results/store.h), through libpq: one server for many jobs
// and hosts, ccbench's tables in the schema `ccbench` of the database the URL names. The only
// file that calls libpq; built where libpq-dev is installed (store_postgres_missing.cpp otherwise).
#include <libpq-fe.h>

#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "core/error.h"
#include "results/format.h"
#include "results/store.h"

namespace ccbench {

namespace {

// Serialises ccbench processes changing the schema (pg_advisory_xact_lock): 'ccbs' 'tore'.
constexpr long long kSchemaLockKey = 0x6363627374726fLL;
// Secrets shorter than this are not looked for in messages (libpq's messages hold none anyway).
constexpr size_t kShortestScrubbed = 4;
// COPY sends its rows in pieces of about this many bytes.
constexpr size_t kCopyChunkBytes = 1 << 20;

// Every secret this connection may hold: the URL's password and PGPASSWORD. Messages from libpq
// name none, but a message passes through scrub() before it is shown, to be sure.
std::vector<std::string> secrets_of(const std::string& url) {
  std::vector<std::string> out;
  char* err = nullptr;
  if (PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err)) {
    for (PQconninfoOption* o = opts; o->keyword; ++o)
      if (std::string(o->keyword) == "password" && o->val && *o->val) out.emplace_back(o->val);
    PQconninfoFree(opts);
  }
  PQfreemem(err);
  if (const char* p = std::getenv("PGPASSWORD"); p && *p) out.emplace_back(p);
  return out;
}

std::string scrub(std::string text, const std::vector<std::string>& secrets) {  // secrets out, one line
  for (const std::string& s : secrets)  // a password of a few letters would only mangle the words around it
    if (s.size() >= kShortestScrubbed)
      for (size_t at = text.find(s); at != std::string::npos; at = text.find(s, at)) text.replace(at, s.size(), "***");
  std::string out;  // on one line, libpq's line breaks and tabs one space each
  for (char c : single_line(text))
    if (c != ' ' || (!out.empty() && out.back() != ' ')) out += c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The exit code of a failed statement, by its SQLSTATE class: the server or the connection gone
// (08, 57), or a store that does not hold what ccbench expects (42, 3D, 3F): precondition; no
// privilege to do it (42501): usage, as an unwritable file; the server out of disk or memory (53,
// 58) or anything else: runtime.
ExitCode code_of(const std::string& state, bool connection_lost) {
  if (connection_lost) return ExitCode::precondition;
  if (state == "42501") return ExitCode::usage;
  const std::string cls = state.substr(0, 2);
  if (cls == "08" || cls == "57" || cls == "42" || cls == "3D" || cls == "3F") return ExitCode::precondition;
  return ExitCode::runtime;
}

class PgRow : public SqlRow {
 public:
  PgRow(const PGresult* r, int row) : r_(r), row_(row) {}
  std::string text(int col) const override {
    return std::string(PQgetvalue(r_, row_, col), static_cast<size_t>(PQgetlength(r_, row_, col)));
  }
  long long integer(int col) const override { return null(col) ? 0 : std::atoll(PQgetvalue(r_, row_, col)); }
  bool null(int col) const override { return PQgetisnull(r_, row_, col) != 0; }

 private:
  const PGresult* r_;
  int row_;
};

using Result = std::unique_ptr<PGresult, decltype(&PQclear)>;

// One field of COPY's text format: backslash, tab, newline and carriage return escaped; \N is NULL.
void append_copy_field(std::string& out, const SqlValue& v) {
  if (std::holds_alternative<std::nullptr_t>(v)) {
    out += "\\N";
  } else if (const auto* n = std::get_if<long long>(&v)) {
    out += std::to_string(*n);
  } else {
    for (char c : std::get<std::string>(v)) {
      if (c == '\\') out += "\\\\";
      else if (c == '\t') out += "\\t";
      else if (c == '\n') out += "\\n";
      else if (c == '\r') out += "\\r";
      else out += c;
    }
  }
}

class PostgresStore : public StoreConnection {
 public:
  explicit PostgresStore(const std::string& url) : label_(store_label(url)), secrets_(secrets_of(url)) {
    connect(url);
    try {
      exec("SET search_path TO ccbench");
    } catch (...) {
      PQfinish(conn_);
      throw;
    }
  }
  ~PostgresStore() override { PQfinish(conn_); }
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;

  const std::string& label() const override { return label_; }
  StoreKind kind() const override { return StoreKind::postgres; }
  std::vector<std::string> tables() override {
    std::vector<std::string> out;
    query("SELECT tablename FROM pg_tables WHERE schemaname = 'ccbench' ORDER BY tablename", {},
          [&](const SqlRow& r) { out.push_back(r.text(0)); });
    return out;
  }
  void exec(const std::string& sql) override { check(Result(PQexec(conn_, sql.c_str()), PQclear)); }
  void query(const std::string& sql, const std::vector<SqlValue>& params, const SqlRowVisitor& each) override {
    std::vector<std::string> texts(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    for (size_t i = 0; i < params.size(); ++i) {
      if (const auto* t = std::get_if<std::string>(&params[i])) values[i] = t->c_str();
      else if (const auto* n = std::get_if<long long>(&params[i])) values[i] = (texts[i] = std::to_string(*n)).c_str();
    }
    Result r(
        PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr, values.data(), nullptr, nullptr, 0),
        PQclear);
    check(r);
    if (!each) return;
    for (int row = 0; row < PQntuples(r.get()); ++row) each(PgRow(r.get(), row));
  }
  void insert_rows(const std::string& table, const std::vector<std::string>& columns,
                   const std::vector<std::vector<SqlValue>>& rows) override;
  void begin_write() override { exec("BEGIN"); }
  void begin_schema_change() override;
  void begin_read() override { exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); }
  void commit() override { exec("COMMIT"); }
  void rollback() noexcept override { PQclear(PQexec(conn_, "ROLLBACK")); }

 private:
  void connect(const std::string& url);
  void check(const Result& r) {
    const ExecStatusType s = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
    if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK || s == PGRES_COPY_IN) return;
    fail_result(r.get());
  }
  [[noreturn]] void fail_result(const PGresult* r) {
    const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
    const char* primary = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
    const bool lost = PQstatus(conn_) != CONNECTION_OK;
    const std::string what = primary ? primary : PQerrorMessage(conn_);
    throw Error(code_of(state ? state : "", lost),
                fmt::format("history {}: PostgreSQL: {}{}{}", label_, scrub(what, secrets_),
                            state ? fmt::format(" (SQLSTATE {})", state) : "",
                            lost ? "; the connection to the server was lost" : ""));
  }

  std::string label_;
  std::vector<std::string> secrets_;
  PGconn* conn_ = nullptr;
};

void PostgresStore::connect(const std::string& url) {
  // Ours first, so that the URL's own settings (and PGCONNECT_TIMEOUT, when set) win.
  std::vector<const char*> keys = {"application_name"}, values = {"ccbench"};
  const std::string timeout = std::to_string(kConnectTimeoutS);
  if (!std::getenv("PGCONNECT_TIMEOUT")) {
    keys.push_back("connect_timeout");
    values.push_back(timeout.c_str());
  }
  keys.push_back("dbname");
  values.push_back(url.c_str());
  keys.push_back(nullptr);
  values.push_back(nullptr);
  conn_ = PQconnectdbParams(keys.data(), values.data(), 1);
  if (conn_ && PQstatus(conn_) == CONNECTION_OK) {
    PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);  // "schema ... already exists, skipping"
    return;
  }
  auto named = [this](const char* v) { return conn_ && v && *v ? std::string(v) : std::string("(default)"); };
  const std::string why = conn_ ? scrub(PQerrorMessage(conn_), secrets_) : "out of memory";
  const std::string where = fmt::format("host {}, port {}, database {}, user {}", named(PQhost(conn_)),
                                        named(PQport(conn_)), named(PQdb(conn_)), named(PQuser(conn_)));
  PQfinish(conn_);
  conn_ = nullptr;
  fail(ExitCode::precondition,
       "history {}: cannot connect to PostgreSQL ({}): {}; check that the server runs there and the URL, and the "
       "password in PGPASSFILE (~/.pgpass) or PGPASSWORD",
       label_, where, why);
}

void PostgresStore::insert_rows(const std::string& table, const std::vector<std::string>& columns,
                                const std::vector<std::vector<SqlValue>>& rows) {
  check(
      Result(PQexec(conn_, fmt::format("COPY {} ({}) FROM STDIN", table, fmt::join(columns, ", ")).c_str()), PQclear));
  std::string chunk;
  auto send = [&] {
    if (!chunk.empty() && PQputCopyData(conn_, chunk.data(), static_cast<int>(chunk.size())) != 1) fail_result(nullptr);
    chunk.clear();
  };
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) chunk += '\t';
      append_copy_field(chunk, row[i]);
    }
    chunk += '\n';
    if (chunk.size() >= kCopyChunkBytes) send();
  }
  send();
  if (PQputCopyEnd(conn_, nullptr) != 1) fail_result(nullptr);
  Result end(PQgetResult(conn_), PQclear);
  while (PGresult* more = PQgetResult(conn_)) PQclear(more);
  check(end);
}

void PostgresStore::begin_schema_change() {
  exec("BEGIN");
  exec(fmt::format("SELECT pg_advisory_xact_lock({})", kSchemaLockKey));
  // CREATE SCHEMA needs the CREATE privilege on the database even when the schema exists: only
  // when it does not.
  bool exists = false;
  query("SELECT 1 FROM pg_namespace WHERE nspname = 'ccbench'", {}, [&](const SqlRow&) { exists = true; });
  if (!exists) exec("CREATE SCHEMA ccbench");
}

}  // namespace

bool postgres_built_in() { return true; }

std::unique_ptr<StoreConnection> open_postgres_store(const std::string& url) {
  char* err = nullptr;  // a URL libpq cannot read is bad input, not a server that cannot be reached
  if (PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err)) {
    PQconninfoFree(opts);
  } else {
    const std::string why = err ? scrub(err, secrets_of(url)) : "out of memory";
    PQfreemem(err);
    fail(ExitCode::usage,
         "history {}: not a PostgreSQL URL: {}; the form is postgresql://[USER@]HOST[:PORT]/DATABASE"
         "[?PARAMETER=VALUE&...] (libpq's connection URI)",
         store_label(url), why);
  }
  return std::make_unique<PostgresStore>(url);
}

}  // namespace ccbench
