#include "transports/cpu/mpi_channel.h"

#include <chrono>
#include <climits>
#include <cstdlib>

#include "core/checks.h"
#include "core/error.h"

namespace ccbench {

namespace {

// How long a destructor waits for a cancelled receive that a transfer had already matched.
constexpr std::chrono::seconds kCancelWait{1};

bool mpi_usable() {
  int finalized = 0;
  return MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized;
}

// Destructors cannot report: a request whose test fails counts as still in flight, so its slot
// is leaked rather than freed under MPI.
bool completed(MPI_Request& r) {
  int flag = 0;
  return MPI_Test(&r, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag;
}

}  // namespace

MpiSendChannel::MpiSendChannel(MPI_Comm comm, int peer, int tag, size_t slot_bytes, int depth)
    : comm_(comm), peer_(peer), tag_(tag), slot_bytes_(slot_bytes), req_(static_cast<size_t>(depth), MPI_REQUEST_NULL) {
  if (slot_bytes > static_cast<size_t>(INT_MAX) || depth < 1)
    fail(ExitCode::usage, "MPI channel geometry {} bytes x {} slots is invalid (slots up to {} bytes, depth >= 1)",
         slot_bytes, depth, INT_MAX);
  mem_.allocate(slot_bytes, depth);
}

MpiSendChannel::~MpiSendChannel() {
  if (!mpi_usable()) {
    (void)mem_.base.release();  // MPI may still own the slots
    return;
  }
  bool leak = false;
  for (MPI_Request& r : req_) {
    if (r == MPI_REQUEST_NULL) continue;
    if (!completed(r)) {
      // Completes in the background once the peer receives it; its slot must stay valid.
      (void)MPI_Request_free(&r);
      leak = true;
    }
  }
  if (leak) (void)mem_.base.release();
}

void* MpiSendChannel::try_acquire() {
  const size_t i = tail_ % req_.size();
  if (req_[i] != MPI_REQUEST_NULL) {
    int flag = 0;
    check_mpi(MPI_Test(&req_[i], &flag, MPI_STATUS_IGNORE), "MPI_Test of a channel send");
    if (!flag) return nullptr;
  }
  return mem_.slot(i);
}

void MpiSendChannel::post(size_t bytes) {
  const size_t i = tail_ % req_.size();
  check_mpi(MPI_Isend(mem_.slot(i), static_cast<int>(bytes), MPI_BYTE, peer_, tag_, comm_, &req_[i]),
            "MPI_Isend of a channel slot");
  ++tail_;
}

bool MpiSendChannel::try_drain() {
  int flag = 0;
  check_mpi(MPI_Testall(static_cast<int>(req_.size()), req_.data(), &flag, MPI_STATUSES_IGNORE),
            "MPI_Testall of channel sends");
  return flag != 0;
}

MpiRecvChannel::MpiRecvChannel(MPI_Comm comm, int peer, int tag, size_t slot_bytes, int depth)
    : comm_(comm), peer_(peer), tag_(tag), slot_bytes_(slot_bytes), req_(static_cast<size_t>(depth), MPI_REQUEST_NULL) {
  if (slot_bytes > static_cast<size_t>(INT_MAX) || depth < 1)
    fail(ExitCode::usage, "MPI channel geometry {} bytes x {} slots is invalid (slots up to {} bytes, depth >= 1)",
         slot_bytes, depth, INT_MAX);
  mem_.allocate(slot_bytes, depth);
}

MpiRecvChannel::~MpiRecvChannel() {
  if (!mpi_usable()) {
    (void)mem_.base.release();
    return;
  }
  bool leak = false;
  for (MPI_Request& r : req_) {
    if (r == MPI_REQUEST_NULL) continue;
    // A posted receive that nothing will match: cancel it. A receive already matched by a
    // transfer in progress cannot be cancelled; give it a second, then leave it to MPI.
    (void)MPI_Cancel(&r);  // a failed cancel shows as a receive that never completes below
    const auto until = std::chrono::steady_clock::now() + kCancelWait;
    bool done = false;
    while (!done && std::chrono::steady_clock::now() < until) done = completed(r);
    if (!done) {
      (void)MPI_Request_free(&r);
      leak = true;
    }
  }
  if (leak) (void)mem_.base.release();
}

void MpiRecvChannel::start() {
  for (size_t i = 0; i < req_.size(); ++i) post_slot(i);
}

void MpiRecvChannel::post_slot(size_t i) {
  check_mpi(MPI_Irecv(mem_.slot(i), static_cast<int>(slot_bytes_), MPI_BYTE, peer_, tag_, comm_, &req_[i]),
            "MPI_Irecv of a channel slot");
}

const void* MpiRecvChannel::try_peek(size_t* bytes) {
  const size_t i = head_ % req_.size();
  if (!ready_) {
    int flag = 0;
    MPI_Status st;
    check_mpi(MPI_Test(&req_[i], &flag, &st), "MPI_Test of a channel receive");
    if (!flag) return nullptr;
    int n = 0;
    check_mpi(MPI_Get_count(&st, MPI_BYTE, &n), "MPI_Get_count of a channel receive");
    ready_ = true;
    ready_bytes_ = static_cast<size_t>(n);
  }
  *bytes = ready_bytes_;
  return mem_.slot(i);
}

void MpiRecvChannel::release() {
  const size_t i = head_ % req_.size();
  ready_ = false;
  ++head_;
  post_slot(i);
}

}  // namespace ccbench
