#include "collectives/gpu/peer_state.h"

#include <optional>

#include "core/checks.h"
#include "core/error.h"

namespace ccbench::gpu {

PeerState::PeerState(MPI_Comm comm, std::size_t scratch_bytes, const std::vector<int>& peers)
    : comm_(comm), peers_(peers), scratch_(comm, scratch_bytes, peers), epochs_(kMaxChannels) {
  int n = 1;
  CCB_MPI(MPI_Comm_size(comm, &n));
  for (int r = 0; r < n; ++r) table_.scratch_of[r] = static_cast<char*>(scratch_.of(r));
  upload();
}

void PeerState::attach(const BufferSet& b, bool send, bool recv) {
  set_ = b;
  int n = 1;
  CCB_MPI(MPI_Comm_size(comm_, &n));
  try {
    if (send) send_ = std::make_unique<IpcBufferMap>(comm_, b.send, peers_);
    if (recv) recv_ = std::make_unique<IpcBufferMap>(comm_, b.recv, peers_);
  } catch (const Error& e) {  // agreed: every rank closes what it mapped before the harness frees
    send_.reset();
    recv_.reset();
    if (e.is_agreed()) check_mpi(MPI_Barrier(comm_), "MPI_Barrier after closing CUDA IPC mappings");
    throw;
  }
  for (int r = 0; r < n; ++r) {
    table_.send_of[r] = send_ ? send_->of(r) : nullptr;
    table_.recv_of[r] = recv_ ? recv_->of(r) : nullptr;
  }
  upload();
}

void PeerState::detach() {
  if (!send_ && !recv_) return;
  send_.reset();
  recv_.reset();
  // The peers' kernels are done with these buffers (the harness synchronised); once every rank
  // has closed its mappings, the owners may free them (CUDA: not before).
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier after closing the CUDA IPC mappings of the buffers");
}

PeerParams PeerState::barrier_params(int rank, int nranks, const WaitLimits& limits) const {
  PeerParams p{};
  p.nranks = nranks;
  p.rank = rank;
  p.blocks = 1;
  p.grid = 1;
  p.table = device_.get();
  p.epochs = epochs_.at(0);
  p.limits = limits;
  return p;
}

char* PeerState::peer_address(int r, const void* mine) const {
  auto* m = static_cast<const char*>(mine);
  auto offset_in = [m](const void* base, std::size_t bytes) -> std::optional<std::size_t> {
    auto* b = static_cast<const char*>(base);
    if (!b || m < b || m >= b + bytes) return std::nullopt;
    return static_cast<std::size_t>(m - b);
  };
  if (recv_)
    if (auto off = offset_in(set_.recv, set_.recv_bytes)) return static_cast<char*>(recv_->of(r)) + *off;
  if (send_)
    if (auto off = offset_in(set_.send, set_.send_bytes)) return static_cast<char*>(send_->of(r)) + *off;
  fail(ExitCode::runtime, "a buffer given to run() lies outside the attached buffers");
}

PeerParams PeerState::params(const CallArgs& a, int rank, int nranks, int blocks, const WaitLimits& limits) const {
  PeerParams p = barrier_params(rank, nranks, limits);
  p.dtype = a.spec.dtype;
  p.op = a.spec.op;
  p.root = a.spec.root;
  p.blocks = blocks;
  p.grid = blocks;
  p.send = a.send;
  p.recv = a.recv;
  p.count = a.count;
  if (!send_ && !recv_) return p;
  auto* snd = static_cast<const char*>(a.send);
  auto* rcv = static_cast<const char*>(a.recv);
  auto* sb = static_cast<const char*>(set_.send);
  auto* rb = static_cast<const char*>(set_.recv);
  if (snd >= rb && snd <= rb + set_.recv_bytes) {
    p.send_in_recv = 1;
    p.send_offset = static_cast<std::size_t>(snd - rb);
  } else if (snd >= sb && snd <= sb + set_.send_bytes) {
    p.send_offset = static_cast<std::size_t>(snd - sb);
  } else {
    fail(ExitCode::runtime, "a buffer given to run() lies outside the attached buffers");
  }
  if (rcv < rb || rcv > rb + set_.recv_bytes) fail(ExitCode::runtime, "a receive buffer lies outside the attached one");
  p.recv_offset = static_cast<std::size_t>(rcv - rb);
  return p;
}

}  // namespace ccbench::gpu
