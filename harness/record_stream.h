#pragma once
// Rank 0's rows on their way to the result files: each row is completed (the columns of what it
// is judged against: link ceiling, efficiency, the model's prediction) before any writer sees
// it, and kept, in the order the writers got it, for the verdicts at the end of the run.
#include <functional>
#include <vector>

#include "results/sink.h"

namespace ccbench {

class RecordStream final : public ResultSink {
 public:
  using Complete = std::function<void(RunRecord&)>;
  // `out`: the writers (they must outlive the stream); `complete` fills a row's columns in place
  // and must give the same row the same columns however often it runs.
  RecordStream(ResultSink& out, Complete complete) : out_(out), complete_(std::move(complete)) {}
  void begin(const Json& context) override { out_.begin(context); }
  void add(const RunRecord& row) override { out_.add(keep(row)); }
  void add_last(const RunRecord& row) override { out_.add_last(keep(row)); }
  void finish(const RunOutcome& outcome) override { out_.finish(outcome); }
  // The same rows again, completed again (what revision adds may change what they are judged by).
  void revise(const std::vector<RunRecord>& rows) override;

  // Every row so far, completed.
  const std::vector<RunRecord>& rows() const { return rows_; }

 private:
  const RunRecord& keep(RunRecord row);
  ResultSink& out_;
  Complete complete_;
  std::vector<RunRecord> rows_;
};

}  // namespace ccbench
