// results/history on its SQLite store: append and read back, trends, the fleet median, 16
// concurrent writers, damaged, newer and foreign files (left byte for byte as they were), a
// version-1 store migrated. The same verbs on PostgreSQL: tests/postgres/test_store_postgres.cpp.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "core/error.h"
#include "results/history.h"
#include "results/row_check.h"
#include "results/store_schema.h"
#include "tests/support/history_test_data.h"

namespace ccbench {
namespace {

std::string temp_db(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "ccbench-history-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

using history_test::context_of;
using history_test::row;

TEST(History, AppendsRunsAndReadsThemBack) {
  const std::string db = temp_db("a.db");
  History h(db);
  EXPECT_EQ(h.append(context_of("node01"), {row(1 << 20, 76), row(1 << 30, 325)}, "OK", 0), 1);
  EXPECT_EQ(h.append(context_of("node02"), {row(1 << 30, 300)}, "FAILED: acceptance threshold missed", 4), 2);
  const auto runs = h.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].host, "node01");
  EXPECT_EQ(runs[0].kind, "gpu NVIDIA H200 x2");
  EXPECT_EQ(runs[0].rows, 2);
  EXPECT_EQ(runs[1].verdict, "FAILED: acceptance threshold missed");
  EXPECT_EQ(runs[1].exit_code, 4);
  EXPECT_EQ(h.runs("node02").size(), 1u);
  CaseFilter f;
  f.collective = "allreduce";
  f.bytes = 1 << 30;
  const auto t = h.trend(f);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_DOUBLE_EQ(t[0].row.busbw_median_gbps, 325);
  EXPECT_DOUBLE_EQ(t[1].row.busbw_median_gbps, 300);
  f.host = "node01";
  EXPECT_EQ(h.trend(f).size(), 1u);
  const std::string list = runs_table(runs);
  EXPECT_NE(list.find("#  run  started (UTC)         host          kind                    commit"), std::string::npos) << list;
  EXPECT_NE(list.find("     2  2026-11-30T10:00:00Z  node02        gpu NVIDIA H200 x2      abc123                  1  FAILED: "
                      "acceptance threshold missed\n"),
            std::string::npos) << list;
  const std::string trend = trend_table(h.trend(f));
  EXPECT_NE(trend.find("allreduce nccl/nccl float out-of-place            1 GiB   3303.821 us     325.00 GB/s"),
            std::string::npos) << trend;
}

TEST(History, FleetMedianOfTheOtherNodesOfTheSameKind) {
  History h(temp_db("fleet.db"));
  h.append(context_of("n1"), {row(1 << 30, 300)}, "OK", 0);
  h.append(context_of("n1"), {row(1 << 30, 320)}, "OK", 0);  // n1's latest counts
  h.append(context_of("n2"), {row(1 << 30, 340)}, "OK", 0);
  h.append(context_of("n3"), {row(1 << 30, 100)}, "OK", 0);  // the node under test
  h.append(context_of("n4", "NVIDIA H100"), {row(1 << 30, 10)}, "OK", 0);  // another kind
  int hosts = 0;
  const auto m = h.fleet_median("gpu NVIDIA H200 x2", "n3", &hosts);
  EXPECT_EQ(hosts, 2);
  ASSERT_EQ(m.size(), 1u);
  // The median time of n1's and n2's (the mean of the two), and its busbw: 2 / (1/320 + 1/340).
  EXPECT_NEAR(m[0].busbw_median_gbps, 329.70, 0.01);
  EXPECT_TRUE(row_damage(m[0]).empty()) << row_damage(m[0]);
  EXPECT_TRUE(h.fleet_median("gpu NVIDIA B200 x2", "n3", &hosts).empty());
  EXPECT_EQ(hosts, 0);
}

TEST(History, TwoConcurrentWritersLoseNothing) {
  const std::string db = temp_db("concurrent.db");
  History{db};  // created before the writers start
  constexpr int kRunsEach = 25;
  auto writer = [&](const std::string& host) {
    History h(db);  // a connection of its own, as another job would have
    for (int i = 0; i < kRunsEach; ++i)  // each run its own start, as runs have
      h.append(context_of(host, "NVIDIA H200", fmt::format("2026-11-30T10:00:{:02}Z", i)),
               {row(8, 0.001), row(1 << 20, 50 + i)}, "OK", 0);
  };
  std::thread a(writer, "a"), b(writer, "b");
  a.join();
  b.join();
  History h(db);
  EXPECT_EQ(h.runs().size(), 2u * kRunsEach);
  EXPECT_EQ(h.runs("a").size(), static_cast<size_t>(kRunsEach));
  EXPECT_EQ(h.runs("b").size(), static_cast<size_t>(kRunsEach));
  for (const HistoryRun& r : h.runs()) EXPECT_EQ(r.rows, 2) << "run " << r.id;
}

// Jobs that start together on a store that does not exist yet: one creates it and turns it to
// WAL while the others probe and open it; SQLite may answer those busy at once (no busy handler),
// which must be waited for, never reported as a damaged file.
TEST(History, JobsCreatingTheStoreTogetherAllGetIn) {
  constexpr int kJobs = 4, kRounds = 10;
  for (int round = 0; round < kRounds; ++round) {
    const std::string db = temp_db("together-" + std::to_string(round) + ".db");
    std::vector<std::string> errors(kJobs);
    std::vector<std::thread> jobs;
    for (int j = 0; j < kJobs; ++j)
      jobs.emplace_back([&, j] {
        try {
          History::probe(db);
          History(db).append(context_of("h" + std::to_string(j)), {row(8, 0.001)}, "OK", 0);
        } catch (const Error& e) {
          errors[static_cast<size_t>(j)] = e.what();
        }
      });
    for (std::thread& t : jobs) t.join();
    for (const std::string& e : errors) EXPECT_EQ(e, "") << "round " << round;
    EXPECT_EQ(History(db).runs().size(), static_cast<size_t>(kJobs)) << "round " << round;
  }
}

TEST(History, ADamagedFileIsAClearError) {
  const std::string db = temp_db("damaged.db");
  std::ofstream(db) << "this is not an SQLite database, but a text file of some length...........................";
  try {
    History h(db);
    FAIL() << "a damaged file was opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::precondition);
    EXPECT_EQ(std::string(e.what()), "history " + db +
                                         ": file is not a database (a damaged or foreign file: move it away; the "
                                         "results folders of the runs are intact)");
  }
}

TEST(History, ANewerSchemaIsRefused) {
  const std::string db = temp_db("newer.db");
  { History h(db); }
  sqlite3* raw = nullptr;  // as a newer ccbench would leave it
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  try {
    History h(db);
    FAIL() << "a newer schema was opened";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "history " + db + ": schema version 99 is newer than this ccbench reads (2)");
  }
}

// Writes SQL into a store as another program (or a damaged disk) would.
void raw_sql(const std::string& db, const char* sql) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(raw, sql, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(raw);
}

TEST(History, AMissingStoreIsRefusedWhenReadAndMadeWhenAppended) {
  const std::string db = temp_db("missing.db");
  try {
    History h(db, HistoryAccess::read);
    FAIL() << "a missing store was opened for reading";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("history " + db + ": no such file; give an existing history, or start one"),
              std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(db)) << "reading made the file";
  { History h(db, HistoryAccess::append); }
  EXPECT_TRUE(History(db, HistoryAccess::read).runs().empty());
}

TEST(History, AStoreThatCannotBeWrittenSaysWhyAsAUsageError) {
  const std::string missing_folder = temp_db("no-such-folder") + "/h.db", folder = temp_db("a-folder.db");
  std::filesystem::create_directories(folder);
  for (const std::string& db : {missing_folder, folder}) {
    try {
      History h(db, HistoryAccess::append);
      FAIL() << db << " was opened";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
      EXPECT_NE(std::string(e.what()).find("history " + db + ": cannot write: "), std::string::npos) << e.what();
    }
    EXPECT_THROW(History::probe(db), Error);
  }
}

TEST(History, TheSameRunIsStoredOnce) {
  const std::string db = temp_db("twice.db");
  History h(db);
  bool again = true;
  const long long id = h.append(context_of("n1"), {row(1 << 20, 76)}, "OK", 0, &again);
  EXPECT_FALSE(again);
  EXPECT_EQ(h.append(context_of("n1"), {row(1 << 20, 76)}, "OK", 0, &again), id);
  EXPECT_TRUE(again);
  // The same run as its results.csv holds it (6 significant digits) is the same run too.
  RunRecord exact = row(1 << 20, 76.0000001);
  EXPECT_EQ(h.append(context_of("n1"), {exact}, "OK", 0, &again), id);
  EXPECT_TRUE(again);
  // Another run of the same command started in the same second measured other figures.
  EXPECT_NE(h.append(context_of("n1"), {row(1 << 20, 75)}, "OK", 0, &again), id);
  EXPECT_FALSE(again);
  EXPECT_EQ(h.runs().size(), 2u);
}

TEST(History, AVerdictNotKnownIsStoredAsNotKnown) {
  History h(temp_db("unknown.db"));
  h.append(context_of("n1"), {row(1 << 20, 76)}, "unknown (no run.json beside results.csv)", std::nullopt);
  h.append(context_of("n1", "NVIDIA H200", "2026-11-30T11:00:00Z"), {row(1 << 20, 76)}, "FAILED (exit code 5: timeout)", 5);
  const auto runs = h.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_FALSE(runs[0].exit_code.has_value());
  EXPECT_EQ(runs[0].verdict, "unknown (no run.json beside results.csv)");
  EXPECT_EQ(runs[1].exit_code, 5);
}

TEST(History, ImpossibleValuesAreNeverStoredAndStoredOnesAreMarked) {
  const std::string db = temp_db("damage.db");
  History h(db);
  RunRecord nan_row = row(1 << 20, 76);
  nan_row.busbw_gbps = std::nan("");
  h.append(context_of("n1"), {nan_row, row(1 << 30, 300)}, "OK", 0);
  CaseFilter all;
  all.collective = "allreduce";
  auto t = h.trend(all);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].row.status, RowStatus::failed);  // sealed on the way in
  EXPECT_NE(t[0].row.reason.find("impossible figures, not written (busbw[GB/s] is nan"), std::string::npos)
      << t[0].row.reason;
  // A stored row made impossible behind the store's back: marked in the trend, left out of the fleet.
  h.append(context_of("n2"), {row(1 << 30, 320)}, "OK", 0);
  raw_sql(db, "UPDATE rows SET record = json_set(record, '$.busbw_median_gbps', -1) WHERE run_id = 2");
  const std::string trend = trend_table(h.trend(all));
  EXPECT_NE(trend.find("DAMAGED: busbw_median[GB/s] is negative (-1)"), std::string::npos) << trend;
  int hosts = 0, damaged = 0;
  EXPECT_TRUE(h.fleet_median("gpu NVIDIA H200 x2", "n3", &hosts, &damaged).size() == 1);
  EXPECT_EQ(damaged, 1);
}

TEST(History, AForeignSqliteFileIsLeftAlone) {
  const std::string db = temp_db("foreign.db");
  raw_sql(db, "CREATE TABLE customers (name TEXT)");
  try {
    History h(db);
    FAIL() << "a foreign file was opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::precondition);
    EXPECT_NE(std::string(e.what()).find("not a ccbench history"), std::string::npos) << e.what();
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(raw, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'", -1, &s, nullptr);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(s, 0), 1) << "tables were added to someone else's file";
  sqlite3_finalize(s);
  sqlite3_close(raw);
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Another program's SQLite file, with a `meta` table of its own: refused before anything is
// written to it, neither WAL mode nor our tables (issue: it was switched to WAL and given our
// tables before the refusal).
TEST(History, AForeignFileWithAMetaTableIsRefusedBeforeAnyWrite) {
  for (const char* sql : {"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('v', '7')",
                          "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); CREATE TABLE notes (t TEXT); "
                          "INSERT INTO notes VALUES ('theirs')"}) {
    const std::string db = temp_db("theirs.db");
    raw_sql(db, sql);
    const std::string before = bytes_of(db);
    for (int attempt = 0; attempt < 2; ++attempt) {
      try {
        if (attempt == 0) History{db};
        else History::probe(db);
        FAIL() << "a foreign file was accepted: " << sql;
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::precondition);
        EXPECT_NE(std::string(e.what()).find("not a ccbench history"), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(bytes_of(db), before) << "the foreign file changed: " << sql;
    EXPECT_FALSE(std::filesystem::exists(db + "-wal")) << "a WAL file was made beside it";
  }
}

// A store of ccbench 0.3 (schema version 1, as its SQL made it) is upgraded on first use: its
// runs kept in order, found again when added again.
TEST(History, AVersionOneStoreIsMigrated) {
  const std::string db = temp_db("v1.db");
  raw_sql(db, R"(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY, started_utc TEXT, host TEXT, kind TEXT, git_hash TEXT, command TEXT,
  verdict TEXT, exit_code INTEGER, context TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rows (
  run_id INTEGER NOT NULL REFERENCES runs(id), collective TEXT, impl TEXT, transport TEXT, dtype TEXT,
  bytes INTEGER, status TEXT, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rows_case ON rows (collective, impl, transport, dtype, bytes);
CREATE INDEX IF NOT EXISTS runs_kind ON runs (kind, host);
INSERT INTO meta VALUES ('schema_version', '1');
)");
  const std::vector<RunRecord> old_rows = {row(1 << 10, 1), row(1 << 20, 76), row(1 << 30, 300)};
  for (int run = 1; run <= 2; ++run) {
    const Json c = context_of("old0" + std::to_string(run));
    raw_sql(db, fmt::format("INSERT INTO runs VALUES ({}, '2026-11-30T10:00:00Z', 'old0{}', 'gpu NVIDIA H200 x2', "
                            "'abc123', 'ccbench -b 8', 'OK', 0, '{}')", run, run, c.dump()).c_str());
    for (const RunRecord& r : old_rows)
      raw_sql(db, fmt::format("INSERT INTO rows VALUES ({}, 'allreduce', 'nccl', 'nccl', 'float', {}, 'ok', '{}')", run,
                              r.bytes, to_json(sealed(r)).dump()).c_str());
  }
  History h(db, HistoryAccess::read);  // reading upgrades it (the file is writable)
  {
    auto s = open_store(db, HistoryAccess::read);
    EXPECT_EQ(stored_schema_version(*s), kStoreSchemaVersion);
  }
  ASSERT_EQ(h.runs().size(), 2u);
  EXPECT_EQ(h.runs()[1].rows, 3);
  CaseFilter f;
  f.host = "old02";
  const auto t = h.trend(f);
  ASSERT_EQ(t.size(), 3u);
  for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i].row.bytes, old_rows[i].bytes);
  bool again = false;
  EXPECT_EQ(History(db).append(context_of("old02"), old_rows, "OK", 0, &again), 2);
  EXPECT_TRUE(again) << "a migrated run added again was stored twice";
}

// 16 jobs appending to one SQLite file on a local disk at once: each waits its turn (busy
// timeout) and nothing is lost or stored twice, the run they all add included.
TEST(History, SixteenConcurrentWritersHoldOnALocalDisk) {
  const std::string db = temp_db("sixteen.db");
  History{db};
  constexpr int kWriters = 16, kRunsEach = 3;
  std::vector<std::string> errors(kWriters);
  std::vector<std::thread> writers;
  std::vector<RunRecord> rows;
  for (int i = 0; i < 200; ++i) rows.push_back(row(std::uint64_t{8} << (i % 24), 1 + i % 9));
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      try {
        History h(db);
        h.append(context_of("shared"), rows, "OK", 0);
        for (int i = 0; i < kRunsEach; ++i)
          h.append(context_of("w" + std::to_string(w), "NVIDIA H200", fmt::format("2026-11-30T10:00:{:02}Z", i)), rows,
                   "OK", 0);
      } catch (const Error& e) {
        errors[static_cast<size_t>(w)] = e.what();
      }
    });
  for (std::thread& t : writers) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  History h(db, HistoryAccess::read);
  EXPECT_EQ(h.runs().size(), static_cast<size_t>(kWriters * kRunsEach + 1));
  EXPECT_EQ(h.runs("shared").size(), 1u);
  for (const HistoryRun& r : h.runs()) EXPECT_EQ(r.rows, 200) << "run " << r.id;
}

}  // namespace
}  // namespace ccbench
