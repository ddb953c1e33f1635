#include "results/record.h"

#include <charconv>
#include <functional>
#include <limits>
#include <map>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "results/row_key.h"

namespace ccbench {

bool row_measured(const RunRecord& r) { return r.status == RowStatus::ok || r.status == RowStatus::wrong; }

std::string json_text(const Json& obj, const char* key) {
  return obj.contains(key) && obj[key].is_string() ? obj[key].get<std::string>() : "";
}

std::string_view row_status_name(RowStatus s) {
  switch (s) {
    case RowStatus::ok: return "ok";
    case RowStatus::wrong: return "wrong";
    case RowStatus::skipped: return "skipped";
    case RowStatus::failed: return "failed";
  }
  return "failed";
}

RowStatus parse_row_status(std::string_view s) {
  for (RowStatus st : {RowStatus::ok, RowStatus::wrong, RowStatus::skipped, RowStatus::failed})
    if (row_status_name(st) == s) return st;
  fail(ExitCode::usage, "unknown row status '{}' (valid: ok, wrong, skipped, failed)", s);
}

namespace {

enum class Kind {
  text,
  integer,
  optional_integer,
  unsigned_integer,
  boolean,
  real,
  optional_real,
  real_list,
  status,
  health
};

// One column: its descriptor, value kind and how it maps onto RunRecord.
struct Field {
  Column column;
  Kind kind;
  std::function<Json(const RunRecord&)> get;
  std::function<void(RunRecord&, const Json&)> set;
};

// A value read into a member of type T: a whole number outside T's range is an error, never
// wrapped (a 64-bit number read into an int).
template <typename T>
T checked(const Json& v, const char* column) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const bool fits = v.is_number_unsigned()  ? std::in_range<T>(v.get<std::uint64_t>())
                      : v.is_number_integer() ? std::in_range<T>(v.get<std::int64_t>())
                                              : true;
    if (!fits)
      fail(ExitCode::usage, "column '{}': {} is out of range (valid: {} to {})", column, v.dump(),
           std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  }
  return v.get<T>();
}

Field optional(Field f) {
  f.column.optional = true;
  return f;
}

// The health columns (results/health.h) after the others: optional, empty where not read.
std::vector<Field> with_health_fields(std::vector<Field> f) {
  for (size_t i = 0; i < health_columns().size(); ++i)
    f.push_back(optional(Field{{health_columns()[i].key, health_columns()[i].csv_header},
                               Kind::health,
                               [i](const RunRecord& r) { return health_value(r.health, i); },
                               [i](RunRecord& r, const Json& v) { set_health_value(r.health, i, v); }}));
  return f;
}

#define CCB_FIELD(member, header, kind)                                                        \
  Field {                                                                                      \
    {#member, header}, kind, [](const RunRecord& r) { return Json(r.member); },                \
        [](RunRecord& r, const Json& v) { r.member = checked<decltype(r.member)>(v, header); } \
  }

// The wrong count: null when not checked. Files written before it could be empty held -1.
constexpr std::int64_t kOldUncheckedMark = -1;
constexpr const char* kWrongHeader = "wrong[elements]";

Field wrong_field() {
  return Field{{"wrong", kWrongHeader},
               Kind::optional_integer,
               [](const RunRecord& r) { return r.wrong ? Json(*r.wrong) : Json(nullptr); },
               [](RunRecord& r, const Json& v) {
                 const auto n = v.is_null() ? kOldUncheckedMark : checked<std::int64_t>(v, kWrongHeader);
                 if (n < kOldUncheckedMark)
                   fail(ExitCode::usage, "column '{}': {} is not a count (valid: empty for not checked, or 0 or more)",
                        kWrongHeader, n);
                 r.wrong = n == kOldUncheckedMark ? std::nullopt : std::optional<std::int64_t>(n);
               }};
}

// The sweep of a repeated run, from 1; files before schema 4 lack it (number_cycles()).
Field cycle_field() {
  return optional(Field{{"cycle", "cycle"},
                        Kind::integer,
                        [](const RunRecord& r) { return Json(r.cycle); },
                        [](RunRecord& r, const Json& v) {
                          r.cycle = checked<int>(v, "cycle");
                          if (r.cycle < 1)
                            fail(ExitCode::usage, "column 'cycle': {} is not a cycle (valid: 1 or more)", r.cycle);
                        }});
}

// An optional number: null in JSON and empty in CSV when not set.
template <typename T>
Field optional_number(const char* key, const char* header, std::optional<T> RunRecord::*member) {
  return optional(Field{{key, header},
                        std::is_integral_v<T> ? Kind::optional_integer : Kind::optional_real,
                        [member](const RunRecord& r) { return r.*member ? Json(*(r.*member)) : Json(nullptr); },
                        [member, header](RunRecord& r, const Json& v) {
                          r.*member = v.is_null() ? std::nullopt : std::optional<T>(checked<T>(v, header));
                        }});
}

// A list of numbers, one per rank: a JSON array; in CSV the numbers separated by spaces.
Field number_list(const char* key, const char* header, std::vector<double> RunRecord::*member) {
  return optional(Field{{key, header},
                        Kind::real_list,
                        [member](const RunRecord& r) { return Json(r.*member); },
                        [member](RunRecord& r, const Json& v) { r.*member = v.get<std::vector<double>>(); }});
}

std::string list_cell(const Json& v) {
  std::string out;
  for (const Json& x : v) out += fmt::format("{}{:.6g}", out.empty() ? "" : " ", x.get<double>());
  return out;
}

template <typename T>
T parse_number(const std::string& s, const char* column) {
  T value{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size())
    fail(ExitCode::usage, "column '{}': '{}' is not a valid number", column, s);
  return value;
}

Json parse_list(const std::string& s, const char* column) {
  Json out = Json::array();
  size_t at = 0;
  while (at < s.size()) {
    const size_t end = std::min(s.find(' ', at), s.size());
    if (end > at) out.push_back(parse_number<double>(s.substr(at, end - at), column));
    at = end + 1;
  }
  return out;
}

const std::vector<Field>& fields() {
  static const std::vector<Field> f = with_health_fields({
      CCB_FIELD(collective, "collective", Kind::text),
      CCB_FIELD(impl, "impl", Kind::text),
      CCB_FIELD(transport, "transport", Kind::text),
      optional(CCB_FIELD(algorithm, "algorithm", Kind::text)),
      CCB_FIELD(device, "device", Kind::text),
      CCB_FIELD(dtype, "dtype", Kind::text),
      CCB_FIELD(op, "op", Kind::text),
      CCB_FIELD(root, "root", Kind::integer),
      CCB_FIELD(bytes, "size[B]", Kind::unsigned_integer),
      CCB_FIELD(count, "count[elements]", Kind::unsigned_integer),
      CCB_FIELD(in_place, "in_place", Kind::boolean),
      CCB_FIELD(mode, "mode", Kind::text),
      CCB_FIELD(ranks, "ranks", Kind::integer),
      CCB_FIELD(ranks_per_node, "ranks_per_node", Kind::integer),
      CCB_FIELD(nodes, "nodes", Kind::integer),
      CCB_FIELD(group, "group", Kind::text),
      cycle_field(),
      CCB_FIELD(warmup, "warmup", Kind::integer),
      CCB_FIELD(iterations, "iterations", Kind::integer),
      CCB_FIELD(time_avg_us, "time_avg[us]", Kind::real),
      CCB_FIELD(time_median_us, "time_median[us]", Kind::real),
      CCB_FIELD(time_min_us, "time_min[us]", Kind::real),
      CCB_FIELD(time_p95_us, "time_p95[us]", Kind::real),
      CCB_FIELD(time_max_us, "time_max[us]", Kind::real),
      CCB_FIELD(time_cv, "time_cv", Kind::real),
      CCB_FIELD(algbw_gbps, "algbw[GB/s]", Kind::real),
      CCB_FIELD(busbw_gbps, "busbw[GB/s]", Kind::real),
      CCB_FIELD(busbw_median_gbps, "busbw_median[GB/s]", Kind::real),
      wrong_field(),
      Field{{"status", "status"},
            Kind::status,
            [](const RunRecord& r) { return Json(std::string(row_status_name(r.status))); },
            [](RunRecord& r, const Json& v) { r.status = parse_row_status(v.get<std::string>()); }},
      CCB_FIELD(reason, "reason", Kind::text),
      optional(CCB_FIELD(host, "host", Kind::text)),
      optional(CCB_FIELD(link, "link", Kind::text)),
      optional_number("slowest_rank", "slowest_rank", &RunRecord::slowest_rank),
      optional(CCB_FIELD(slowest_host, "slowest_host", Kind::text)),
      optional_number("rank_spread", "rank_spread", &RunRecord::rank_spread),
      optional_number("straggler_ratio", "straggler_ratio", &RunRecord::straggler_ratio),
      optional_number("group_outlier_ratio", "group_outlier_ratio", &RunRecord::group_outlier_ratio),
      optional(CCB_FIELD(culprit, "culprit", Kind::text)),
      number_list("rank_times_us", "rank_times[us]", &RunRecord::rank_times_us),
      number_list("rank_median_us", "rank_median[us]", &RunRecord::rank_median_us),
      optional_number("link_ceiling_gbps", kLinkCeilingHeader, &RunRecord::link_ceiling_gbps),
      optional_number("efficiency", "efficiency", &RunRecord::efficiency),
      optional_number("predicted_time_us", "predicted_time[us]", &RunRecord::predicted_time_us),
      optional_number("predicted_busbw_gbps", kPredictedBusbwHeader, &RunRecord::predicted_busbw_gbps),
      optional_number("model_efficiency", "model_efficiency", &RunRecord::model_efficiency),
      optional_number("model_link_gbps", "model_link[GB/s]", &RunRecord::model_link_gbps),
      optional(CCB_FIELD(model_link, "model_link", Kind::text)),
      optional(CCB_FIELD(model_reason, "model_reason", Kind::text)),
      optional(CCB_FIELD(nccl_config, "nccl_config", Kind::text)),
      optional(CCB_FIELD(load, "load", Kind::text)),
      optional(CCB_FIELD(load_unit, "load_unit", Kind::text)),
      optional_number("load_alone", "load_alone", &RunRecord::load_alone),
      optional_number("load_during", "load_during", &RunRecord::load_during),
      optional_number("load_alone_end", "load_alone_end", &RunRecord::load_alone_end),
  });
  return f;
}
#undef CCB_FIELD

}  // namespace

const std::vector<Column>& record_columns() {
  static const std::vector<Column> cols = [] {
    std::vector<Column> c;
    for (const Field& f : fields()) c.push_back(f.column);
    return c;
  }();
  return cols;
}

Json to_json(const RunRecord& r) {
  Json j = Json::object();
  for (const Field& f : fields()) j[f.column.key] = f.get(r);
  return j;
}

RunRecord record_from_json(const Json& j) {
  RunRecord r;
  for (const Field& f : fields()) {
    if (!j.contains(f.column.key)) {
      if (f.column.optional) continue;
      fail(ExitCode::usage, "result row has no field '{}'", f.column.key);
    }
    try {
      f.set(r, j.at(f.column.key));
    } catch (const nlohmann::json::exception& e) {
      fail(ExitCode::usage, "result field '{}' has the wrong type: {}", f.column.key, e.what());
    }
  }
  return r;
}

std::vector<std::string> to_csv_fields(const RunRecord& r) {
  std::vector<std::string> out;
  for (const Field& f : fields()) {
    Json v = f.get(r);
    switch (f.kind) {
      case Kind::text:
      case Kind::status: out.push_back(v.get<std::string>()); break;
      case Kind::boolean: out.push_back(v.get<bool>() ? "true" : "false"); break;
      case Kind::optional_integer: out.push_back(v.is_null() ? "" : v.dump()); break;
      case Kind::optional_real: out.push_back(v.is_null() ? "" : fmt::format("{:.6g}", v.get<double>())); break;
      case Kind::real_list: out.push_back(list_cell(v)); break;
      case Kind::real: out.push_back(fmt::format("{:.6g}", v.get<double>())); break;
      case Kind::health: out.push_back(health_cell(v)); break;
      default: out.push_back(v.dump()); break;
    }
  }
  return out;
}

RunRecord record_from_csv(const std::vector<std::string>& header, const std::vector<std::string>& values) {
  if (header.size() != values.size())
    fail(ExitCode::usage, "CSV row has {} fields but the header has {}", values.size(), header.size());
  Json j = Json::object();
  for (const Field& f : fields()) {
    size_t i = 0;
    while (i < header.size() && header[i] != f.column.csv_header) ++i;
    if (i == header.size()) {
      if (f.column.optional) continue;
      fail(ExitCode::usage, "CSV has no column '{}'", f.column.csv_header);
    }
    const std::string& s = values[i];
    switch (f.kind) {
      case Kind::text:
      case Kind::status: j[f.column.key] = s; break;
      case Kind::integer: j[f.column.key] = parse_number<std::int64_t>(s, f.column.csv_header); break;
      case Kind::optional_integer:
        j[f.column.key] = s.empty() ? Json(nullptr) : Json(parse_number<std::int64_t>(s, f.column.csv_header));
        break;
      case Kind::unsigned_integer: j[f.column.key] = parse_number<std::uint64_t>(s, f.column.csv_header); break;
      case Kind::real: j[f.column.key] = parse_number<double>(s, f.column.csv_header); break;
      case Kind::optional_real:
        j[f.column.key] = s.empty() ? Json(nullptr) : Json(parse_number<double>(s, f.column.csv_header));
        break;
      case Kind::real_list: j[f.column.key] = parse_list(s, f.column.csv_header); break;
      case Kind::boolean:
        if (s != "true" && s != "false")
          fail(ExitCode::usage, "column '{}': '{}' is not true or false", f.column.csv_header, s);
        j[f.column.key] = (s == "true");
        break;
      case Kind::health: j[f.column.key] = health_value_from_cell(f.column.key, s); break;
    }
  }
  return record_from_json(j);
}

void number_cycles(std::vector<RunRecord>& rows) {
  std::map<RowKey, int> seen;
  for (RunRecord& r : rows) r.cycle = ++seen[measurement_key(r)];
}

void check_schema_version(long long version, const std::string& where) {
  if (version >= kOldestSchemaVersion && version <= kSchemaVersion) return;
  fail(ExitCode::usage,
       "{}: schema_version {} is not one this ccbench reads (it reads {} to {}); read it with the "
       "ccbench that wrote it, or a newer one",
       where, version, kOldestSchemaVersion, kSchemaVersion);
}

}  // namespace ccbench
