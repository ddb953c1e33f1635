#include "transports/net/credit_channel.h"

#include <fmt/format.h>

#include "core/checks.h"
#include "transports/wait.h"

namespace ccbench {

CreditEnd::CreditEnd(Transport transport, const SetupArgs& a, bool huge_slots)
    : transport_(name(transport).data()), peer_(peer_label(a)), peer_rank_(a.peer), tag_(a.tag),
      slot_bytes_(a.options->slot_bytes), depth_(a.options->depth), caller_slots_(a.slots != nullptr),
      gpu_(a.slots ? a.slots_gpu : -1) {
  char* base = a.slots;
  if (!base) {
    if (huge_slots) own_.allocate_huge(slot_bytes_, depth_);
    else own_.allocate(slot_bytes_, depth_);
    base = own_.slot(0);
  }
  region_ = {reinterpret_cast<std::uint64_t>(base), caller_slots_ ? slot_bytes_ : own_.stride,
             static_cast<std::uint32_t>(depth_)};
}

void wait_setup_request(MPI_Request& req, MPI_Status* st, std::chrono::steady_clock::time_point deadline,
                        const char* transport, const std::string& what) {
  const std::string test = fmt::format("MPI_Test during {} set-up", transport);
  Backoff backoff;
  for (int done = 0;;) {
    check_mpi(MPI_Test(&req, &done, st), test);
    if (done) return;
    if (std::chrono::steady_clock::now() > deadline) fail(ExitCode::timeout, "{}: channel set-up: {}", transport, what);
    backoff.pause();
  }
}

}  // namespace ccbench
