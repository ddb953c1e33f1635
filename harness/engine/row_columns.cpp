#include "harness/engine/row_columns.h"

#include <algorithm>

#include "results/stragglers.h"

namespace ccbench {

std::vector<double> over_ranks(MPI_Comm comm, std::vector<double> v, RankTime how) {
  const int n = static_cast<int>(v.size());
  if (how == RankTime::rank0) {
    check_mpi(MPI_Bcast(v.data(), n, MPI_DOUBLE, 0, comm), "MPI_Bcast of rank 0's times");
    return v;
  }
  std::vector<double> out(v.size());
  const MPI_Op op = how == RankTime::min ? MPI_MIN : how == RankTime::max ? MPI_MAX : MPI_SUM;
  check_mpi(MPI_Allreduce(v.data(), out.data(), n, MPI_DOUBLE, op, comm), "MPI_Allreduce of times");
  if (how == RankTime::average) {
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    for (double& x : out) x /= ranks;
  }
  return out;
}

RankTimes gather_rank_times(MPI_Comm comm, double batch_us, double median_us) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const std::array<double, 2> mine{batch_us, median_us};
  std::vector<double> all(rank == 0 ? 2 * static_cast<size_t>(ranks) : 0);
  check_mpi(MPI_Gather(mine.data(), 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, 0, comm), "MPI_Gather of rank times");
  RankTimes t;
  for (size_t i = 0; i + 1 < all.size(); i += 2) {
    t.batch.push_back(all[i]);
    t.median.push_back(all[i + 1]);
  }
  return t;
}

void set_rank_columns(RunRecord& r, RankTimes t, const std::vector<std::string>& hosts) {
  r.rank_times_us = std::move(t.batch);
  r.rank_median_us = std::move(t.median);
  fill_straggler_columns(r, hosts);
  if (!hosts.empty() && std::all_of(hosts.begin(), hosts.end(), [&](const std::string& h) { return h == hosts[0]; }))
    r.host = hosts[0];
}

void clear_rank_columns(RunRecord& r) {
  r.rank_times_us.clear();
  r.rank_median_us.clear();
  r.slowest_rank.reset();
  r.slowest_host.clear();
  r.rank_spread.reset();
  r.straggler_ratio.reset();
}

void set_times(RunRecord& r, const TimeStats& t, double avg_us, double factor) {
  r.time_avg_us = avg_us;
  r.time_median_us = t.median;
  r.time_min_us = t.min;
  r.time_p95_us = t.p95;
  r.time_max_us = t.max;
  r.time_cv = t.cv;
  r.algbw_gbps = gigabytes_per_second(static_cast<double>(r.bytes), avg_us);
  r.busbw_gbps = r.algbw_gbps * factor;
  r.busbw_median_gbps = gigabytes_per_second(static_cast<double>(r.bytes), t.median) * factor;
}

void settle(RunRecord& r, const std::string& first_wrong, const char* unchecked_reason) {
  r.status = r.wrong.value_or(0) > 0 ? RowStatus::wrong : RowStatus::ok;
  r.reason = r.status == RowStatus::wrong ? first_wrong : r.wrong ? "" : unchecked_reason;
}

}  // namespace ccbench
