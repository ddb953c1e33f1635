#pragma once
// Runs for the history tests of both stores (tests/unit/test_history.cpp on SQLite,
// tests/postgres/test_store_postgres.cpp on PostgreSQL): a run's context and a sound row.
#include <cstdint>
#include <string>

#include "results/record.h"
#include "tests/support/record_builder.h"

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
  return test::RecordBuilder()
      .impl("nccl")
      .transport("nccl")
      .device("gpu")
      .bytes(bytes)
      .iterations(20)
      .busbw(busbw, busbw)
      .algbw(busbw)
      .time_us(bytes / (busbw * 1e3));
}

}  // namespace ccbench::history_test
