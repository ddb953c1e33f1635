#pragma once
// The names of implementations and of the performance model's schedules, as types. Both are read
// from the one table, collectives/implementations.def; every other file names an implementation
// or a schedule by its id, and turns text into an id (or back) through these functions only.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

// One implementation name (--impl, the rows' impl column). The same id may run on either device:
// the registry (implementation.h) holds one entry per id and device.
enum class ImplId {
#define CCBENCH_IMPLEMENTATION(id, name) id,
#include "collectives/implementations.def"
};

std::string_view name(ImplId id);
// Every id, in the table's order.
const std::vector<ImplId>& all_impl_ids();
// The id named `text`; nullopt for anything else (no aliases).
std::optional<ImplId> parse_impl_id(std::string_view text);
// The names, in the table's order; and joined: "mpi, ring, tree, ...".
std::vector<std::string> impl_names();
std::string valid_implementations();
// `text` as an id, else Error(usage): "LABEL: unknown implementation 'TEXT' (valid: ...MORE)" and
// the closest names. `label` is the flag ("--impl"), `more` what else the flag takes (", or all").
ImplId parse_impl_id_for(std::string_view text, std::string_view label, std::string_view more = "");

// One schedule of the performance model (harness/model/model.h): how one of our implementations
// (or NCCL's) moves data, costed step by step. Named after that implementation ("ring",
// "nccl-tree"); CPU hier's leader scheme is a schedule of its own, hier-leader.
enum class ModelSchedule {
#define CCBENCH_SCHEDULE(id, named_after, suffix) id,
#include "collectives/implementations.def"
};

std::string name(ModelSchedule s);
const std::vector<ModelSchedule>& all_model_schedules();
std::optional<ModelSchedule> parse_model_schedule(std::string_view text);

}  // namespace ccbench
