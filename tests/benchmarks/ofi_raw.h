#pragma once
// The provider's own ceiling for ccbench_channel_bench: a bare loop of libfabric writes between
// two ranks, no protocol of ccbench's (no credits, no notices, no slot order). Rank 0 streams an
// iteration's bytes in pieces of the channels' slot size from the same source buffer the channel
// rows send from, each piece one write into the next of rank 1's `depth` registered slots, at most
// `depth` writes outstanding (the channels' window); rank 1 only polls its completion queue.
// Each iteration ends as the channel rows' do: once every write has completed, rank 0 sends an
// 8-byte tagged message and waits for rank 1's answer. The write is the one ccbench's rma channels
// use for data on that provider: fi_write where the plan writes bare and notifies afterwards (shm),
// fi_writedata otherwise (remote CQ data per piece, which rank 1 reads from its queue).
// When rank 0 stops, rank 1 checks that its slots hold the bytes of the last pieces written.
// Throws Error on a failed libfabric call or completion; built only with libfabric.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <mpi.h>

#include "topologies/layout.h"

namespace ccbench {

class OfiRawLoop {
 public:
  virtual ~OfiRawLoop() = default;
  // Collective over the two ranks of `comm` (rank 0 writes, rank 1 is written): the provider as
  // --ofi-provider names it, its endpoint opened as the ofi channels open theirs, slots registered
  // on rank 1, `source` (`source_bytes`, the channel rows' buffer) registered on rank 0.
  static std::unique_ptr<OfiRawLoop> open(MPI_Comm comm, const RankLayout& layout, const std::string& provider,
                                          std::size_t slot_bytes, int depth, const char* source,
                                          std::size_t source_bytes);
  // "fi_write" or "fi_writedata": the operation it loops on.
  virtual std::string op() const = 0;
  // Rank 0: one iteration of `bytes`.
  virtual void stream(std::uint64_t bytes) = 0;
  // Rank 0: ends rank 1's serve(); true when rank 1 found the last pieces' bytes in its slots.
  virtual bool stop() = 0;
  // Rank 1: answers iterations of `bytes` until rank 0 stops.
  virtual void serve(std::uint64_t bytes) = 0;
};

}  // namespace ccbench
