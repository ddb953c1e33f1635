// results/history over a real PostgreSQL server (tests/postgres/pg_server.py starts one and says
// where in PG_FIXTURE_*): the verbs as on SQLite, one copy of a run added twice (also by many
// writers at the same moment), 16 writers at once losing and duplicating nothing while a reader
// sees whole runs only, a version-1 store migrated, newer and foreign schemas refused, and
// connection failures that name host, port and database but never the password.
#include <libpq-fe.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "results/history.h"
#include "results/store.h"
#include "results/store_schema.h"
#include "tests/support/history_test_data.h"

namespace ccbench {
namespace {

std::string fixture(const char* name) {
  const char* v = std::getenv(name);
  if (!v) throw std::runtime_error(fmt::format("{} is not set: run under tests/postgres/pg_server.py", name));
  return v;
}

// Runs SQL as the fixture's superuser in database `db`; fails the test on an error.
void admin_sql(const std::string& sql, const std::string& db = "postgres") {
  const std::string url = fmt::format("postgresql://ccbench@/{}?host={}&port={}", db, fixture("PG_FIXTURE_SOCKET"),
                                      fixture("PG_FIXTURE_PORT"));
  PGconn* c = PQconnectdb(url.c_str());
  ASSERT_EQ(PQstatus(c), CONNECTION_OK) << PQerrorMessage(c);
  PQsetNoticeProcessor(c, [](void*, const char*) {}, nullptr);  // "database ... does not exist, skipping"
  PGresult* r = PQexec(c, sql.c_str());
  const ExecStatusType s = PQresultStatus(r);
  EXPECT_TRUE(s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) << sql << ": " << PQerrorMessage(c);
  PQclear(r);
  PQfinish(c);
}

// A new, empty database for one test, and its URL (Unix socket, no password needed).
std::string fresh_db(const std::string& name) {
  admin_sql("DROP DATABASE IF EXISTS " + name);
  admin_sql("CREATE DATABASE " + name);
  return fmt::format("postgresql://ccbench@/{}?host={}&port={}", name, fixture("PG_FIXTURE_SOCKET"),
                     fixture("PG_FIXTURE_PORT"));
}

using history_test::row;

// A run of `host` started at `started`.
Json context_of(const std::string& host, const std::string& started = "2026-11-30T10:00:00Z") {
  return history_test::context_of(host, "NVIDIA H200", started);
}

std::vector<RunRecord> rows_of(int n, double busbw) {
  std::vector<RunRecord> out;
  for (int i = 0; i < n; ++i) out.push_back(row(std::uint64_t{1024} << (i % 20), busbw + i % 7));
  return out;
}

TEST(PostgresStore, AppendsRunsAndReadsThemBack) {
  const std::string url = fresh_db("verbs");
  History h(url);
  EXPECT_EQ(h.append(context_of("node01"), {row(1 << 20, 76), row(1 << 30, 325)}, "OK", 0), 1);
  EXPECT_EQ(h.append(context_of("node02"), {row(1 << 30, 300)}, "FAILED: acceptance threshold missed", 4), 2);
  EXPECT_EQ(h.append(context_of("node03"), {row(1 << 30, 320)}, "unknown (no run.json)", std::nullopt), 3);
  const auto runs = History(url, HistoryAccess::read).runs();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].kind, "gpu NVIDIA H200 x2");
  EXPECT_EQ(runs[0].rows, 2);
  EXPECT_EQ(runs[1].verdict, "FAILED: acceptance threshold missed");
  EXPECT_EQ(runs[1].exit_code, 4);
  EXPECT_FALSE(runs[2].exit_code.has_value());
  CaseFilter f;
  f.collective = "allreduce";
  f.bytes = std::uint64_t{1} << 30;
  const auto t = h.trend(f);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_DOUBLE_EQ(t[0].row.busbw_median_gbps, 325);
  EXPECT_DOUBLE_EQ(t[2].row.busbw_median_gbps, 320);
  f.host = "node02";
  EXPECT_EQ(h.trend(f).size(), 1u);
  int hosts = 0;
  const auto m = h.fleet_median("gpu NVIDIA H200 x2", "node03", &hosts);
  EXPECT_EQ(hosts, 2);
  ASSERT_EQ(m.size(), 2u);  // node01's two sizes; at 1 GiB node01 and node02
  EXPECT_NEAR(m[1].busbw_median_gbps, 2 / (1 / 325.0 + 1 / 300.0), 0.01);
}

TEST(PostgresStore, TheSameRunIsStoredOnce) {
  History h(fresh_db("twice"));
  bool again = true;
  const long long id = h.append(context_of("n1"), rows_of(30, 50), "OK", 0, &again);
  EXPECT_FALSE(again);
  EXPECT_EQ(h.append(context_of("n1"), rows_of(30, 50), "OK", 0, &again), id);
  EXPECT_TRUE(again);
  EXPECT_NE(h.append(context_of("n1"), rows_of(30, 51), "OK", 0, &again), id);  // other figures: another run
  EXPECT_FALSE(again);
  EXPECT_EQ(h.runs().size(), 2u);
}

// 16 writers, each with its own connection as 16 jobs have: each adds its own runs and, at the
// same moment as all the others, one run they all measured. A reader lists and follows a case
// all the while: every run it sees is whole.
TEST(PostgresStore, SixteenWritersLoseAndDuplicateNothingAndReadersSeeWholeRuns) {
  const std::string url = fresh_db("sixteen");
  History{url};  // the tables, before the writers start
  constexpr int kWriters = 16, kRunsEach = 4, kRows = 300;
  std::atomic<bool> writing{true};
  std::atomic<int> partial{0}, reads{0}, while_writing{0};
  std::thread reader([&] {
    History h(url, HistoryAccess::read);
    CaseFilter f;
    f.bytes = 1024;
    while (writing) {
      const auto runs = h.runs();
      if (!runs.empty() && runs.size() < size_t{kWriters * kRunsEach + 1}) ++while_writing;
      for (const HistoryRun& r : runs)
        if (r.rows != kRows) ++partial;
      std::map<long long, int> points;  // rows_of gives 1 KiB rows i = 0, 20, 40, ...: 15 per run
      for (const TrendPoint& p : h.trend(f)) ++points[p.run.id];
      for (const auto& [run, n] : points)
        if (n != 15) ++partial;
      ++reads;
    }
  });
  std::vector<std::string> errors(kWriters);
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      try {
        History h(url);
        h.append(context_of("shared", "2026-12-01T00:00:00Z"), rows_of(kRows, 9), "OK", 0);
        for (int i = 0; i < kRunsEach; ++i)
          h.append(context_of(fmt::format("node{:02}", w), fmt::format("2026-12-01T10:00:{:02}Z", i)),
                   rows_of(kRows, 10 + w), "OK", 0);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(w)] = e.what();
      }
    });
  for (std::thread& t : writers) t.join();
  writing = false;
  reader.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  History h(url, HistoryAccess::read);
  const auto runs = h.runs();
  EXPECT_EQ(runs.size(), static_cast<size_t>(kWriters * kRunsEach + 1));
  EXPECT_EQ(h.runs("shared").size(), 1u) << "the run all writers added at once was stored more than once";
  for (int w = 0; w < kWriters; ++w) EXPECT_EQ(h.runs(fmt::format("node{:02}", w)).size(), size_t{kRunsEach});
  for (const HistoryRun& r : runs) EXPECT_EQ(r.rows, kRows) << "run " << r.id;
  EXPECT_EQ(partial, 0) << "a reader saw a run without all its rows";
  EXPECT_GT(while_writing, 0) << "no read saw the store between the first run and the last (" << reads << " reads)";
}

TEST(PostgresStore, AVersionOneStoreIsMigrated) {
  const std::string url = fresh_db("migrate");
  {
    auto s = open_store(url, HistoryAccess::append);
    EXPECT_EQ(migrate_store(*s, 1), 0);
    // A run as version 1 stored it: no fingerprint, no row order.
    const Json c = context_of("old01");
    s->query("INSERT INTO runs (started_utc, host, kind, git_hash, command, verdict, exit_code, context) VALUES "
             "($1, 'old01', 'gpu NVIDIA H200 x2', 'abc123', 'ccbench -b 8', 'OK', 0, $2)",
             {std::string("2026-11-30T10:00:00Z"), c.dump()});
    for (const RunRecord& r : rows_of(5, 40))
      s->query("INSERT INTO rows (run_id, collective, impl, transport, dtype, bytes, status, record) VALUES "
               "(1, 'allreduce', 'nccl', 'nccl', 'float', $1, 'ok', $2)",
               {static_cast<long long>(r.bytes), to_json(r).dump()});
    EXPECT_EQ(stored_schema_version(*s), 1);
  }
  History h(url);  // upgrades
  auto s = open_store(url, HistoryAccess::read);
  EXPECT_EQ(stored_schema_version(*s), kStoreSchemaVersion);
  const auto runs = h.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].rows, 5);
  bool again = false;
  EXPECT_EQ(h.append(context_of("old01"), rows_of(5, 40), "OK", 0, &again), 1) << "the migrated run not found again";
  EXPECT_TRUE(again);
  CaseFilter all;
  all.collective = "allreduce";
  const auto t = h.trend(all);
  ASSERT_EQ(t.size(), 5u);
  for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i].row.bytes, rows_of(5, 40)[i].bytes) << "rows out of order";
}

TEST(PostgresStore, NewerAndForeignSchemasAreRefused) {
  const std::string newer = fresh_db("newer");
  { History h(newer); }
  admin_sql("UPDATE ccbench.meta SET value = '99' WHERE key = 'schema_version'", "newer");
  try {
    History h(newer);
    FAIL() << "a newer schema was opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::precondition);
    EXPECT_EQ(std::string(e.what()), fmt::format("history {}: schema version 99 is newer than this ccbench reads ({})",
                                                 store_label(newer), kStoreSchemaVersion));
  }
  const std::string foreign = fresh_db("theirs");
  admin_sql("CREATE SCHEMA ccbench; CREATE TABLE ccbench.customers (name TEXT)", "theirs");
  try {
    History h(foreign);
    FAIL() << "a foreign schema was written to";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::precondition);
    EXPECT_NE(std::string(e.what()).find("not a ccbench history (schema ccbench holds the tables customers"),
              std::string::npos) << e.what();
  }
  auto s = open_store(foreign, HistoryAccess::read);
  EXPECT_EQ(s->tables(), std::vector<std::string>{"customers"}) << "tables were added to someone else's schema";
  try {
    History h(fresh_db("empty"), HistoryAccess::read);
    FAIL() << "a database without a history was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("holds no ccbench history yet"), std::string::npos) << e.what();
  }
}

// The password, wherever it comes from, opens the store and never appears in a message.
TEST(PostgresStore, CredentialsFromTheUrlPgpassfileAndEnvironmentNeverPrinted) {
  fresh_db("secret");
  const std::string port = fixture("PG_FIXTURE_PORT"), password = fixture("PG_FIXTURE_PASSWORD");
  const std::string tcp = fmt::format("postgresql://ccbench@127.0.0.1:{}/secret", port);
  const std::string with_password = fmt::format("postgresql://ccbench:{}@127.0.0.1:{}/secret", password, port);
  EXPECT_EQ(store_label(with_password), tcp);
  History(with_password).append(context_of("a"), {row(8, 1)}, "OK", 0);

  const std::string passfile = ::testing::TempDir() + "ccbench-pgpass";
  std::ofstream(passfile) << fmt::format("127.0.0.1:{}:secret:ccbench:{}\n", port, password);
  ::chmod(passfile.c_str(), 0600);  // libpq ignores a password file others can read
  ::setenv("PGPASSFILE", passfile.c_str(), 1);
  EXPECT_EQ(History(tcp, HistoryAccess::read).runs().size(), 1u);
  ::unsetenv("PGPASSFILE");
  ::setenv("PGPASSWORD", password.c_str(), 1);
  EXPECT_EQ(History(tcp, HistoryAccess::read).runs().size(), 1u);
  ::unsetenv("PGPASSWORD");

  const std::string wrong = "Wr0ngSecret" + password.substr(0, 4);
  for (const std::string& url : {tcp, fmt::format("postgresql://ccbench:{}@127.0.0.1:{}/secret", wrong, port)}) {
    try {
      History h(url, HistoryAccess::read);
      FAIL() << "opened without the right password";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(e.code(), ExitCode::precondition);
      EXPECT_NE(m.find(fmt::format("history {}: cannot connect to PostgreSQL (host 127.0.0.1, port {}, database "
                                   "secret, user ccbench)", tcp, port)), std::string::npos) << m;
      EXPECT_EQ(m.find(wrong), std::string::npos) << m;
      EXPECT_EQ(m.find(password), std::string::npos) << m;
    }
  }
}

TEST(PostgresStore, NoServerIsAPreconditionNamingWhere) {
  const std::string url = "postgresql://ops:hunter2@127.0.0.1:1/fleet?connect_timeout=5";
  try {
    History h(url);
    FAIL() << "connected to nothing";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.code(), ExitCode::precondition);
    EXPECT_NE(m.find("history postgresql://ops@127.0.0.1:1/fleet?connect_timeout=5: cannot connect to PostgreSQL "
                     "(host 127.0.0.1, port 1, database fleet, user ops): "),
              std::string::npos) << m;
    EXPECT_NE(m.find("Connection refused"), std::string::npos) << m;
    EXPECT_EQ(m.find("hunter2"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace ccbench
