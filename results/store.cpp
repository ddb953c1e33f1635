#include "results/store.h"

#include <fmt/format.h>

#include "core/error.h"

namespace ccbench {

namespace {

constexpr const char* kSchemes[] = {"postgresql://", "postgres://"};

// Where a URL starting at `at` in `text` ends: at white space or a quote.
size_t url_end(const std::string& text, size_t at) {
  const size_t end = text.find_first_of(" \t\r\n'\"", at);
  return end == std::string::npos ? text.size() : end;
}

// A URL's parameters without `password=...` (libpq's keyword for it).
std::string without_password_parameter(const std::string& query) {
  std::string kept;
  size_t from = 0;
  while (from <= query.size()) {
    const size_t amp = std::min(query.find('&', from), query.size());
    const std::string part = query.substr(from, amp - from);
    if (!part.empty() && part.rfind("password=", 0) != 0) kept += (kept.empty() ? "" : "&") + part;
    from = amp + 1;
  }
  return kept;
}

// One URL without its secrets: user:PASSWORD@ becomes user@, password=... is left out.
std::string label_of_url(const std::string& url) {
  const size_t scheme_end = url.find("://") + 3;
  const size_t path = std::min(url.find_first_of("/?", scheme_end), url.size());
  std::string authority = url.substr(scheme_end, path - scheme_end);
  if (const size_t at = authority.rfind('@'); at != std::string::npos) {
    const size_t colon = authority.find(':');
    if (colon < at) authority.erase(colon, at - colon);
  }
  std::string rest = url.substr(path);
  if (const size_t q = rest.find('?'); q != std::string::npos) {
    const std::string kept = without_password_parameter(rest.substr(q + 1));
    rest = rest.substr(0, q) + (kept.empty() ? "" : "?" + kept);
  }
  return url.substr(0, scheme_end) + authority + rest;
}

}  // namespace

bool is_store_url(const std::string& db) {
  for (const char* scheme : kSchemes)
    if (db.rfind(scheme, 0) == 0) return true;
  return false;
}

std::string store_label(const std::string& db) { return is_store_url(db) ? label_of_url(db) : db; }

std::string without_store_secrets(const std::string& text) {
  std::string out = text;
  for (const char* scheme : kSchemes) {
    for (size_t at = out.find(scheme); at != std::string::npos; at = out.find(scheme, at + 1)) {
      const size_t end = url_end(out, at);
      const std::string label = label_of_url(out.substr(at, end - at));
      out.replace(at, end - at, label);
    }
  }
  return out;
}

std::unique_ptr<StoreConnection> open_store(const std::string& db, HistoryAccess access) {
  if (!is_store_url(db)) return open_sqlite_store(db, access);
  if (!postgres_built_in())
    fail(ExitCode::precondition,
         "history {}: this ccbench was built without PostgreSQL (libpq-dev was missing when it was built; "
         "`ccbench --version` lists the parts built in): give an SQLite file, or rebuild with libpq-dev installed",
         store_label(db));
  return open_postgres_store(db);
}

}  // namespace ccbench
