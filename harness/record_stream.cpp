#include "harness/record_stream.h"

namespace ccbench {

const RunRecord& RecordStream::keep(RunRecord row) {
  if (complete_) complete_(row);
  rows_.push_back(std::move(row));
  return rows_.back();
}

void RecordStream::revise(const std::vector<RunRecord>& rows) {
  rows_.clear();
  for (const RunRecord& r : rows) keep(r);
  out_.revise(rows_);
}

}  // namespace ccbench
