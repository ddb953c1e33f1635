#include "collectives/impl_id.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/suggest.h"

namespace ccbench {

namespace {

struct ImplName {
  ImplId id;
  std::string_view name;
};

constexpr ImplName kImplNames[] = {
#define CCBENCH_IMPLEMENTATION(id, name) {ImplId::id, name},
#include "collectives/implementations.def"
};

struct ScheduleName {
  ModelSchedule id;
  ImplId named_after;
  std::string_view suffix;
};

constexpr ScheduleName kScheduleNames[] = {
#define CCBENCH_SCHEDULE(id, named_after, suffix) {ModelSchedule::id, ImplId::named_after, suffix},
#include "collectives/implementations.def"
};

// The ids of a name table, in its order.
template <typename Row, std::size_t N>
auto ids_of(const Row (&rows)[N]) {
  std::vector<decltype(Row::id)> out;
  for (const Row& r : rows) out.push_back(r.id);
  return out;
}

}  // namespace

std::string_view name(ImplId id) {
  for (const ImplName& n : kImplNames)
    if (n.id == id) return n.name;
  return "?";
}

const std::vector<ImplId>& all_impl_ids() {
  static const std::vector<ImplId> ids = ids_of(kImplNames);
  return ids;
}

std::optional<ImplId> parse_impl_id(std::string_view text) {
  for (const ImplName& n : kImplNames)
    if (n.name == text) return n.id;
  return std::nullopt;
}

std::vector<std::string> impl_names() {
  std::vector<std::string> out;
  for (const ImplName& n : kImplNames) out.emplace_back(n.name);
  return out;
}

std::string valid_implementations() { return fmt::format("{}", fmt::join(impl_names(), ", ")); }

ImplId parse_impl_id_for(std::string_view text, std::string_view label, std::string_view more) {
  if (const auto id = parse_impl_id(text)) return *id;
  fail(ExitCode::usage, "{}: unknown implementation '{}' (valid: {}{}){}", label, text, valid_implementations(), more,
       did_you_mean(text, impl_names()));
}

std::string name(ModelSchedule s) {
  for (const ScheduleName& n : kScheduleNames)
    if (n.id == s) return std::string(name(n.named_after)) + std::string(n.suffix);
  return "?";
}

const std::vector<ModelSchedule>& all_model_schedules() {
  static const std::vector<ModelSchedule> ids = ids_of(kScheduleNames);
  return ids;
}

std::optional<ModelSchedule> parse_model_schedule(std::string_view text) {
  for (ModelSchedule s : all_model_schedules())
    if (name(s) == text) return s;
  return std::nullopt;
}

}  // namespace ccbench
