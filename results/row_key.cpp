#include "results/row_key.h"

namespace ccbench {

RowKey case_key(const RunRecord& r) {
  RowKey k = RowKey{}.plus(r.collective, r.impl, r.transport, r.device, r.dtype, r.op, r.mode, r.ranks,
                           r.ranks_per_node, r.root, r.group);
  return r.nccl_config.empty() && r.load.empty() ? k : k.plus(r.nccl_config, r.load);
}

RowKey placement_key(const RunRecord& r) { return case_key(r).plus(r.in_place); }

RowKey measurement_key(const RunRecord& r) { return case_key(r).plus(r.bytes, r.count, r.in_place, r.link, r.host); }

RowKey side_by_side_key(const RunRecord& r) {
  return RowKey{}.plus(r.collective, r.dtype, r.op, r.mode, r.in_place, r.ranks, r.ranks_per_node, r.device, r.root,
                       r.group);
}

RowKey group_peer_key(const RunRecord& r) {
  return RowKey{}.plus(r.collective, r.impl, r.dtype, r.op, r.bytes, r.in_place, r.mode, r.ranks, r.root);
}

RowKey fleet_key(const RunRecord& r) {
  return RowKey{}.plus(r.collective, r.impl, r.transport, r.dtype, r.op, r.mode, r.in_place, r.group, r.bytes);
}

}  // namespace ccbench
