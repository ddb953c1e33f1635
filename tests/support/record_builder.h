#pragma once
// Result rows for the tests, built in one place instead of a RunRecord filled field by field in
// each test file. RecordBuilder() starts as the row most tests are about: an all-reduce of floats
// summed by our ring over shm on 2 CPU ranks, nothing measured yet (RunRecord's own defaults
// elsewhere: status ok, not checked, no times). Each call sets what a test is about; the builder
// converts to the RunRecord, which a test may still change field by field for what is its own.
//
//   RunRecord r = RecordBuilder().impl("nccl").transport("nccl").device("gpu").bytes(1 << 20).busbw(76);
#include <cstdint>
#include <string>
#include <utility>

#include "results/record.h"

namespace ccbench::test {

class RecordBuilder {
 public:
  RecordBuilder() {
    r_.collective = "allreduce";
    r_.impl = "ring";
    r_.transport = "shm";
    r_.device = "cpu";
    r_.dtype = "float";
    r_.op = "sum";
    r_.ranks = 2;
  }

  // What was measured.
  RecordBuilder& collective(std::string v) { return set(r_.collective, std::move(v)); }
  RecordBuilder& impl(std::string v) { return set(r_.impl, std::move(v)); }
  RecordBuilder& transport(std::string v) { return set(r_.transport, std::move(v)); }
  RecordBuilder& device(std::string v) { return set(r_.device, std::move(v)); }
  RecordBuilder& dtype(std::string v) { return set(r_.dtype, std::move(v)); }
  RecordBuilder& op(std::string v) { return set(r_.op, std::move(v)); }
  RecordBuilder& bytes(std::uint64_t v) { return set(r_.bytes, v); }
  // bytes and the element count of floats that makes them (the count a float row writes).
  RecordBuilder& float_bytes(std::uint64_t v) {
    r_.count = v / sizeof(float);
    return set(r_.bytes, v);
  }
  RecordBuilder& in_place(bool v = true) { return set(r_.in_place, v); }
  RecordBuilder& group(std::string v) { return set(r_.group, std::move(v)); }
  RecordBuilder& link(std::string v) { return set(r_.link, std::move(v)); }

  // Where: `ranks` over `nodes` nodes of `per_node` ranks (0: not known, as a row of a run that did
  // not record it).
  RecordBuilder& ranks(int ranks, int per_node = 0, int nodes = 0) {
    r_.ranks_per_node = per_node;
    r_.nodes = nodes;
    return set(r_.ranks, ranks);
  }
  RecordBuilder& iterations(int iterations, int warmup = 0) {
    r_.warmup = warmup;
    return set(r_.iterations, iterations);
  }

  // Timing, microseconds. time_us: every iteration took `us` (average, median, min, p95, max).
  RecordBuilder& time_us(double us) { return times_us(us, us, us, us, us); }
  RecordBuilder& times_us(double avg, double median, double min, double p95, double max) {
    r_.time_avg_us = avg;
    r_.time_median_us = median;
    r_.time_min_us = min;
    r_.time_p95_us = p95;
    return set(r_.time_max_us, max);
  }
  RecordBuilder& cv(double v) { return set(r_.time_cv, v); }
  RecordBuilder& algbw(double gbps) { return set(r_.algbw_gbps, gbps); }
  // busbw of the batch average; busbw(b, median) sets the median iteration's figure as well.
  RecordBuilder& busbw(double gbps) { return set(r_.busbw_gbps, gbps); }
  RecordBuilder& busbw(double gbps, double median_gbps) {
    r_.busbw_median_gbps = median_gbps;
    return set(r_.busbw_gbps, gbps);
  }

  // Correctness: checked, with `wrong` wrong elements; a status and its reason.
  RecordBuilder& checked(std::int64_t wrong = 0) { return set(r_.wrong, wrong); }
  RecordBuilder& status(RowStatus s, std::string reason = "") {
    r_.reason = std::move(reason);
    return set(r_.status, s);
  }

  RunRecord build() const { return r_; }
  operator RunRecord() const { return r_; }  // NOLINT: a builder stands where a row is expected

 private:
  template <typename Field, typename Value>
  RecordBuilder& set(Field& field, Value&& value) {
    field = std::forward<Value>(value);
    return *this;
  }

  RunRecord r_;
};

}  // namespace ccbench::test
