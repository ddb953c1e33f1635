#include "harness/overlap/overlap.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/build_config.h"
#include "core/error.h"

namespace ccbench {

FeedPlan feed_plan(double launch_ms) {
  FeedPlan p;
  if (!(launch_ms > 0)) return p;
  p.launches_per_span = static_cast<int>(std::clamp(std::ceil(kSpanMs / launch_ms), 1.0, 1e6));
  const double span_ms = p.launches_per_span * launch_ms;
  p.spans_ahead = static_cast<int>(std::clamp(std::ceil(kAheadMs / span_ms), 2.0, kRingSpans - 1.0));
  return p;
}

void WindowWork::add(double begin_ms, double end_ms, double work, const std::array<std::optional<double>, 2>& at) {
  for (std::size_t j = 0; j < 2; ++j) {
    if (settled_[j]) continue;
    if (!at[j] || end_ms <= *at[j]) {  // wholly before the mark
      before_[j] += work;
      continue;
    }
    if (begin_ms < *at[j] && end_ms > begin_ms) before_[j] += work * (*at[j] - begin_ms) / (end_ms - begin_ms);
    settled_[j] = true;
  }
}

double WindowWork::rate(const std::array<std::optional<double>, 2>& at) const {
  if (!at[0] || !at[1] || !(*at[1] > *at[0])) return 0;
  return (before_[1] - before_[0]) / ((*at[1] - *at[0]) / 1000.0);
}

#if !CCBENCH_HAVE_CUDA
std::unique_ptr<OverlapLoad> make_gpu_load(const OverlapSpec&, int) {
  fail(ExitCode::usage, "--overlap needs GPU ranks, and this ccbench was built without CUDA");
}
#endif

}  // namespace ccbench
