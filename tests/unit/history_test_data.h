#pragma once
// Runs for the history tests of both stores (tests/unit/test_history.cpp on SQLite,
// tests/postgres/test_store_postgres.cpp on PostgreSQL): a run's context and a sound row.
#include <cstdint>
#include <string>

#include "results/record.h"

namespace ccbench::history_test {

// The context of a run on `host` of a 2-GPU node of `gpu`, started at `started`.
inline Json context_of(const std::string& host, const std::string& gpu = "NVIDIA H200",
                       const std::string& started = "2026-11-30T10:00:00Z") {
  return Json{{"started_utc", started}, {"git_hash", "abc123"}, {"device", "gpu"},
              {"ranks_per_node", 2}, {"command_line", "ccbench -b 8"},
              {"ranks_detail", Json::array({{{"rank", 0}, {"host", host}}})},
              {"nodes_detail", Json::array({{{"host", host},
                                             {"node", {{"gpus", {{"available", true},
                                                                 {"gpus", Json::array({{{"name", gpu}}})}}}}}}})}};
}

// An NCCL all-reduce row of `bytes` at `busbw` GB/s (bus factor 1), its times as that gives.
inline RunRecord row(std::uint64_t bytes, double busbw) {
  RunRecord r;
  r.collective = "allreduce";
  r.impl = "nccl";
  r.transport = "nccl";
  r.device = "gpu";
  r.dtype = "float";
  r.op = "sum";
  r.bytes = bytes;
  r.ranks = 2;
  r.iterations = 20;
  r.busbw_gbps = r.busbw_median_gbps = r.algbw_gbps = busbw;
  r.time_avg_us = r.time_median_us = r.time_min_us = r.time_p95_us = r.time_max_us = bytes / (busbw * 1e3);
  return r;
}

}  // namespace ccbench::history_test
