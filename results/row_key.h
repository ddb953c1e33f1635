#pragma once
// A row's identity as one value: which fields make two rows the same case, the same measurement
// or the same fleet entry. Keys compare field by field (the keys of maps and sets); people read
// the same identity as case_title and case_label (results/format.h).
#include <compare>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "results/record.h"

namespace ccbench {

class RowKey {
 public:
  RowKey() = default;
  // This key, then `more` (a row's field each: a placement, a size, a cycle) after its fields.
  template <typename... T>
  RowKey plus(const T&... more) const& {
    return RowKey(*this).plus(more...);
  }
  template <typename... T>
  RowKey plus(const T&... more) && {  // a temporary's fields are extended, not copied
    (fields_.push_back(fmt::format("{}", more)), ...);
    return std::move(*this);
  }
  auto operator<=>(const RowKey&) const = default;
  bool operator==(const RowKey&) const = default;

 private:
  std::vector<std::string> fields_;
};

// The case a row belongs to in the table and Markdown writers: every field but the size, the
// placement (in-place or not), the cycle and where it ran (link, host); the training conditions
// (another communicator, a load) where there are any. Two rows of one case go in one table.
RowKey case_key(const RunRecord& r);
// The case and the placement: what compare's fixed cost is per.
RowKey placement_key(const RunRecord& r);
// One measurement: the case, size, count, placement, link and host; the cycles of a run repeat
// it (number_cycles).
RowKey measurement_key(const RunRecord& r);
// What the comparison table puts side by side: the case and placement but the implementation,
// the transport and the training conditions.
RowKey side_by_side_key(const RunRecord& r);
// The rows of a sub-group run that compare with each other: what row_words names but the group
// (collective, implementation, dtype, op, size, placement, mode), the ranks and the root.
RowKey group_peer_key(const RunRecord& r);
// One entry of the fleet's median: collective, implementation, transport, dtype, op, mode,
// placement, group and size (not the device, rank counts, root or training conditions).
RowKey fleet_key(const RunRecord& r);

}  // namespace ccbench
