#pragma once
// Values no measurement can hold, checked before a row is judged and before it is written.
//
// A row is *damaged* when one of its figures is not a finite number (nan, inf), is negative
// where only zero or more can be (times, bandwidths, spreads, ratios, counts), or contradicts the
// row's other figures:
//   - iteration times out of order: a measured row needs time_min <= time_median <= time_p95 <=
//     time_max (results/stats.h computes all four from one sorted sample);
//   - a coefficient of variation above sqrt(iterations), the largest n samples of zero or more
//     can have;
//   - a bandwidth above what the row's own size and time allow: algbw <= size / time_avg,
//     busbw <= kMaxBusFactor * size / time_avg, busbw_median <= kMaxBusFactor * size /
//     time_median (a zero time allows no bandwidth at all).
// The last is the physical bound: bandwidth is bytes moved per second, and no collective's
// busbw is more than twice its algbw (kMaxBusFactor). It holds whatever the hardware.
//
// Readers (compare, accept, history; scripts/report.py checks the same) never judge a damaged
// row as measured: every check over it fails, naming where it came from. Writers never write
// one: sealed() turns what a computation could not produce into an empty (unknown) figure or a
// failed row that says why.
#include <string>

#include "results/record.h"

namespace ccbench {

// The largest bus factor of any collective: all-reduce's 2(n-1)/n, below 2 for every n (the
// others are (n-1)/n, 1 or 1 - 2/(n(n+1)); collectives/types.h).
inline constexpr double kMaxBusFactor = 2.0;
// How far a figure may exceed its bound and still be sound: rounding. results.csv keeps 6
// significant digits (5e-6 of a figure), but files written by hand or by other tools may keep
// as few as 2 or 3 (0.00085 stands for anything within 0.6%): 1% is rounding, more is not.
inline constexpr double kRoundingSlack = 0.01;

// "" for a sound row, else every impossible value in words, separated by "; ", e.g.
// "busbw[GB/s] is nan; time_min[us] 5 is above time_median[us] 3".
std::string row_damage(const RunRecord& r);

// `r` as a writer may write it: optional figures that are not finite or are negative (a ratio
// over a zero) become empty (not known); a measured row whose own figures are damaged becomes
// failed with its figures zeroed and the damage as its reason. A sound row is returned as is.
RunRecord sealed(const RunRecord& r);

}  // namespace ccbench
