#pragma once
// A results store: where `history` keeps runs. The --db value chooses the kind: a path is an
// SQLite file (the zero-setup default, on one machine's disk); a postgresql:// or postgres://
// URL is a PostgreSQL server (one store for many jobs and hosts; SQLite's locking is not safe on
// the shared file systems clusters have). Both hold the same tables (results/store_schema.h),
// and the history's verbs (results/history.h) are written once, as SQL both understand, over a
// StoreConnection: this header is its contract.
//
// Secrets: a URL's password (user:PASSWORD@, ?password=) is never printed nor recorded;
// messages and run.json name a store by store_label(). libpq also takes the password from
// PGPASSFILE (~/.pgpass) or PGPASSWORD, which ccbench never reads itself.
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace ccbench {

// True for a postgresql:// or postgres:// URL, false for a path.
bool is_store_url(const std::string& db);
// `db` as messages and records name it: a path as given; a URL without its password
// ("postgresql://ops:secret@db1/ccbench?password=x&sslmode=require" ->
// "postgresql://ops@db1/ccbench?sslmode=require").
std::string store_label(const std::string& db);
// `text` (a command-line argument, an environment variable's value) with every PostgreSQL URL in
// it replaced by its store_label(): what run.json and the history record of a command line.
std::string without_store_secrets(const std::string& text);

// How a store is opened: `read` needs an existing store and never writes to it, but to upgrade
// an older schema (a read-only SQLite file can be read, in a read-only folder too); `append`
// creates a missing store and needs it writable (an SQLite file's folder too, where SQLite keeps
// its -wal and -shm files).
enum class HistoryAccess { read, append };

enum class StoreKind { sqlite, postgres };

// A statement's parameter: NULL, an integer or text.
using SqlValue = std::variant<std::nullptr_t, long long, std::string>;

// One row of a query's result, valid while the visitor runs.
class SqlRow {
 public:
  virtual ~SqlRow() = default;
  virtual std::string text(int column) const = 0;   // "" for NULL
  virtual long long integer(int column) const = 0;  // 0 for NULL
  virtual bool null(int column) const = 0;
};
using SqlRowVisitor = std::function<void(const SqlRow&)>;

// One connection to a store. Every failure throws Error naming the store (store_label()) and
// the store's own reason, with the exit code of what went wrong: the store cannot be reached or
// holds something else (precondition, 3), it cannot be written or read as asked (usage, 2, as an
// unwritable --out), the disk or server failed (runtime, 6). Not thread-safe: one per thread.
class StoreConnection {
 public:
  virtual ~StoreConnection() = default;
  // store_label() of the store, for messages.
  virtual const std::string& label() const = 0;
  // Which kind it is: the few statements the two spell differently (results/store_schema.cpp)
  // choose by it.
  virtual StoreKind kind() const = 0;
  // The tables in ccbench's namespace: the SQLite file's, PostgreSQL's schema `ccbench`.
  virtual std::vector<std::string> tables() = 0;
  // Statements without parameters or results (DDL), separated by ';'.
  virtual void exec(const std::string& sql) = 0;
  // One statement with parameters $1..$N, numbered in the order they first appear; `each` is
  // called for every row of its result.
  virtual void query(const std::string& sql, const std::vector<SqlValue>& params, const SqlRowVisitor& each = {}) = 0;
  // Rows into `table`, the fastest way the store has (SQLite: one prepared statement;
  // PostgreSQL: COPY), inside the caller's transaction.
  virtual void insert_rows(const std::string& table, const std::vector<std::string>& columns,
                           const std::vector<std::vector<SqlValue>>& rows) = 0;
  // Transactions. begin_write: a transaction that will write (SQLite: one writer at a time,
  // waiting up to kBusyTimeoutMs for another; PostgreSQL: rows locked as written).
  // begin_schema_change: a write transaction that no other ccbench changing the schema runs
  // beside (SQLite: the same; PostgreSQL: an advisory lock, and schema `ccbench` created).
  // begin_read: one snapshot over several statements. commit() ends any of them; rollback()
  // undoes it and never throws.
  virtual void begin_write() = 0;
  virtual void begin_schema_change() = 0;
  virtual void begin_read() = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
};

// Opens the store `db` names (a path or a URL). SQLite, for `append`: a file that exists is first
// opened read-only and checked (check_store, results/store_schema.h), so another program's file
// is refused before any write; then it is opened for writing in WAL mode. PostgreSQL: a failed
// connection is Error(precondition) naming host, port, database and user, never the password; a
// build without libpq says so (precondition). Does not create or migrate the tables.
std::unique_ptr<StoreConnection> open_store(const std::string& db, HistoryAccess access);
// The SQLite kind's own openers (results/store_sqlite.cpp); `open_store` is the entry point.
std::unique_ptr<StoreConnection> open_sqlite_store(const std::string& path, HistoryAccess access);
// Checks an SQLite store without writing to it, so every rank of a run can (results/history.h).
void probe_sqlite_store(const std::string& path);
// SQLite's locks are not safe on shared file systems: two nodes appending can corrupt the file.
// An SQLite store to append to on one of them is refused (precondition) with the advice to keep
// it on a local disk or use PostgreSQL. The name of the shared file system a statfs() f_type
// (magic number) stands for (NFS, SMB/CIFS, Lustre, GPFS, BeeGFS, CephFS, AFS), or "" for any
// other (local disks, tmpfs, a VM's shared folder).
std::string shared_file_system_name(unsigned long magic);
// The PostgreSQL kind (results/store_postgres.cpp; with no libpq built in, a refusal).
std::unique_ptr<StoreConnection> open_postgres_store(const std::string& url);
// Whether this build can open PostgreSQL stores (libpq).
bool postgres_built_in();

// SQLite waits this long for another writer; a writer holds the file for milliseconds, and a
// 10,000-row run for under a second (evidence cpu2core-20261202-store-speed); 30 s covers a busy
// disk.
inline constexpr int kBusyTimeoutMs = 30000;
inline constexpr int kBusyRetryMs = 20;  // between tries when SQLite answers busy without waiting
// PostgreSQL: how long libpq tries to connect when neither the URL (connect_timeout) nor
// PGCONNECT_TIMEOUT says: an unreachable server is an error in seconds, not after TCP's minutes.
inline constexpr int kConnectTimeoutS = 10;

}  // namespace ccbench
