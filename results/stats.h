#pragma once
// Statistics over per-iteration times.
#include <vector>

namespace ccbench {

struct TimeStats {
  double median = 0, min = 0, max = 0, p95 = 0, mean = 0;
  double cv = 0;  // sample standard deviation / mean; 0 for fewer than two samples
};

// Summary of `samples` (any unit). Empty input gives all zeros. p95 is the nearest-rank
// percentile (the smallest sample with at least 95% of the samples at or below it).
TimeStats summarize(std::vector<double> samples);

// The median of `values` (the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> values);

// Bandwidth in GB/s (1e9 bytes per second) of `bytes` moved in `time_us` microseconds; 0 if time is 0.
double gigabytes_per_second(double bytes, double time_us);

}  // namespace ccbench
