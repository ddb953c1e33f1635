// A build without libpq: PostgreSQL stores are refused by open_store (results/store.cpp), which
// asks postgres_built_in() first; `ccbench --version` says the part is not built in.
#include "core/error.h"
#include "results/store.h"

namespace ccbench {

bool postgres_built_in() { return false; }

std::unique_ptr<StoreConnection> open_postgres_store(const std::string& url) {
  fail(ExitCode::precondition, "history {}: this ccbench was built without PostgreSQL (libpq)", store_label(url));
}

}  // namespace ccbench
