#pragma once
// The measuring halves of `ccbench links` (harness/links/links.h), one per kind of rank. Both are
// collective over `comm`; results are complete on rank 0 only.
#include <cstdint>
#include <vector>

#include <mpi.h>

#include "collectives/gpu/knobs.h"
#include "harness/links/links.h"
#include "topologies/layout.h"
#include "core/transport_names.h"

namespace ccbench {

// CPU ranks over one CPU channel transport (auto, shm, mpi, tcp, ib: core/transport_names.h). Throws
// the agreed Error of connect_channels() when the transport cannot connect the ranks.
std::vector<LinkResult> measure_cpu_links(const LinksOptions& o, Transport transport, const RankLayout& layout,
                                          MPI_Comm comm, const std::vector<std::uint64_t>& sizes);

// The net/tcp ceiling: tcp between the ranks of every ordered pair on different nodes, one pair
// at a time, over `streams.count` connections per direction, each with its own thread, all at
// once, each moving bytes / count per message in slots of streams.slot_bytes through the
// channels' zero-copy ends (the socket reads and writes the buffers themselves, as the GPU net
// proxy does); cells labelled `label`, bandwidth over all streams. The latency is not measured.
std::vector<LinkResult> measure_tcp_streams(const LinksOptions& o, const gpu::NetStreams& streams,
                                            const std::string& label, const RankLayout& layout, MPI_Comm comm,
                                            std::uint64_t bytes);

// GPU ranks (ce, sm, pcie) on `cuda_device` (harness/links/links_gpu.cpp). Pairs on different
// nodes, and pairs without peer access, come back as empty cells with the reason. Throws
// Error(precondition) in a build without CUDA.
std::vector<LinkResult> measure_gpu_links(const LinksOptions& o, Transport transport, const RankLayout& layout,
                                          MPI_Comm comm, int cuda_device, const std::vector<std::uint64_t>& sizes);

// An empty cell of `transport`: the ranks and hosts of src and dst (dst -1: src's host memory).
LinkResult link_cell(const std::string& transport, const char* mode, const RankLayout& layout, int src, int dst,
                     std::uint64_t bytes);

// One pair's three figures from the two ranks that measured them, on rank 0 (others get zeros):
// every rank calls it once per pair with what it measured (0 where it measured nothing).
struct PairFigures {
  double oneway_s = 0, bidir_s = 0, latency_s = 0;
};
PairFigures gather_pair_figures(MPI_Comm comm, const PairFigures& mine);

}  // namespace ccbench
