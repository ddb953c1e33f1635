#include "results/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ccbench {

TimeStats summarize(std::vector<double> s) {
  TimeStats t;
  if (s.empty()) return t;
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  t.min = s.front();
  t.max = s.back();
  t.median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  size_t rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(n)));
  t.p95 = s[std::clamp<size_t>(rank, 1, n) - 1];
  t.mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(n);
  if (n > 1 && t.mean > 0) {
    double sq = 0;
    for (double x : s) sq += (x - t.mean) * (x - t.mean);
    t.cv = std::sqrt(sq / static_cast<double>(n - 1)) / t.mean;
  }
  return t;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return 0.5 * (*mid + *std::max_element(v.begin(), mid));
}

double gigabytes_per_second(double bytes, double time_us) { return time_us > 0 ? bytes / (time_us * 1e3) : 0.0; }

}  // namespace ccbench
