#pragma once
// The tables of a results store, the same in SQLite and PostgreSQL, and their versions:
//
//   meta (key, value)          schema_version
//   runs (id, started_utc, host, kind, git_hash, command, verdict, exit_code, context, fingerprint,
//         row_count)
//   rows (run_id, seq, collective, impl, transport, dtype, bytes, status, record)
//
// `context` is run.json's context block and `record` one row as run.json writes it (JSON text);
// the other columns are what the history's queries select and sort by. Version 1 was the SQLite
// history of ccbench 0.3; version 2 adds runs.fingerprint (one run, one copy: a unique index on
// start time, host and fingerprint), runs.row_count (written with the rows, in the same
// transaction) and rows.seq (a row's place in its run, which PostgreSQL has no rowid for). A store is brought to this
// ccbench's version step by step, in one transaction that no other ccbench changing the schema runs beside; a newer
// store is refused, never downgraded.
#include <string>
#include <vector>

#include "results/record.h"
#include "results/store.h"

namespace ccbench {

inline constexpr int kStoreSchemaVersion = 2;

// The schema version of an open store: 0 when it holds no tables yet. Throws
// Error(precondition) when it holds tables that are not a ccbench history (another program's
// SQLite file, another program's schema `ccbench`) or a version newer than kStoreSchemaVersion.
// Reads only.
int stored_schema_version(StoreConnection& store);

// Brings the store to `target` (creating it when empty) and returns the version it had. Does
// nothing, and takes no lock, when it is there already.
int migrate_store(StoreConnection& store, int target = kStoreSchemaVersion);

// What makes two stored runs the same run: start time, command, first host, commit and the rows
// as results.csv holds them (6 significant digits, sealed), hashed (64-bit FNV-1a, hex, with the
// row count). A run appended by itself and later added from its results folder is one run.
std::string run_fingerprint(const std::string& started_utc, const std::string& command, const std::string& host,
                            const std::string& git_hash, const std::vector<RunRecord>& rows);

}  // namespace ccbench
