#pragma once
// The columns of a measured row that come from every rank (harness/engine/runner.h): times over
// the ranks as -a asks, every rank's own times and the slowest rank, wrong counts summed, the
// timing columns from the samples, the row's status from its wrong count. The functions taking a
// communicator are collective: every rank calls them, in the same order.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include "core/checks.h"
#include "harness/engine/options.h"
#include "results/record.h"
#include "results/stats.h"

namespace ccbench {

// This rank's times as -a asks: rank 0's, the mean, the fastest or the slowest rank's.
std::vector<double> over_ranks(MPI_Comm comm, std::vector<double> v, RankTime how);

// Every rank's own batch time and median single-iteration time, gathered at rank 0 in rank order
// (empty on the other ranks).
struct RankTimes {
  std::vector<double> batch, median;
};
RankTimes gather_rank_times(MPI_Comm comm, double batch_us, double median_us);

// The per-rank columns of a row (rank 0): every rank's times, the slowest rank and, when every
// rank is on one host, that host.
void set_rank_columns(RunRecord& r, RankTimes t, const std::vector<std::string>& hosts);
// None of them (a row whose calls are not the ones the per-rank times were taken of).
void clear_rank_columns(RunRecord& r);

// `v` summed over the ranks, element by element.
template <size_t N>
std::array<std::int64_t, N> sum_over_ranks(MPI_Comm comm, std::array<std::int64_t, N> v) {
  std::array<std::int64_t, N> out{};
  check_mpi(MPI_Allreduce(v.data(), out.data(), static_cast<int>(N), MPI_INT64_T, MPI_SUM, comm),
            "MPI_Allreduce of wrong counts");
  return out;
}

// The timing columns of a row from its samples; `avg_us` is the row's headline time.
void set_times(RunRecord& r, const TimeStats& t, double avg_us, double factor);

// Status and reason of a measured row from its wrong count: wrong, with the first wrong element,
// when any was found; otherwise ok, saying why where the data was not checked.
void settle(RunRecord& r, const std::string& first_wrong, const char* unchecked_reason);

}  // namespace ccbench
