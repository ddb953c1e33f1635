#include "transports/gpu_net.h"

#include <cstring>

#include "transports/gpu_conn.h"

namespace ccbench {

namespace {

// Idle passes before the proxy yields its core (spin only while work is active).
constexpr int kIdleSpins = 64;

std::uint64_t load_acquire(const volatile std::uint64_t* p) {
  const std::uint64_t v = *p;
  std::atomic_thread_fence(std::memory_order_acquire);
  return v;
}
void store_release(volatile std::uint64_t* p, std::uint64_t v) {
  std::atomic_thread_fence(std::memory_order_release);
  *p = v;
}

}  // namespace

NetProxy::NetProxy(MPI_Comm comm, const RankLayout& layout, std::size_t slot_bytes, std::vector<NetFifo> sends,
                   std::vector<NetFifo> recvs, std::chrono::milliseconds timeout)
    : slot_(slot_bytes), sends_(std::move(sends)), recvs_(std::move(recvs)) {
  std::vector<ChannelRequest> requests;
  for (const NetFifo& f : sends_) requests.push_back({f.peer, f.tag, true});
  for (const NetFifo& f : recvs_) requests.push_back({f.peer, f.tag, false});
  ChannelOptions o;
  o.slot_bytes = slot_bytes;
  o.depth = gpu::kFifoSlots;
  o.transport = "tcp";
  o.timeout = timeout;
  channels_ = connect_channels(comm, layout, requests, o);
  posted_.assign(sends_.size(), 0);
  received_.assign(recvs_.size(), 0);
  if (!sends_.empty() || !recvs_.empty()) thread_ = std::thread([this] { loop(); });
}

NetProxy::~NetProxy() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void NetProxy::check() const {
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (error_) std::rethrow_exception(error_);
}

// Staged slots the GPU published go out; each copied slot is granted back to the GPU.
bool NetProxy::move_sends() {
  bool moved = false;
  for (std::size_t i = 0; i < sends_.size(); ++i) {
    const NetFifo& f = sends_[i];
    SendChannel& ch = channels_->send(i);
    while (posted_[i] < load_acquire(f.tail)) {
      void* slot = ch.try_acquire();
      if (!slot) break;
      std::memcpy(slot, f.slots + (posted_[i] % gpu::kFifoSlots) * slot_, slot_);
      ch.post(slot_);
      store_release(f.head, ++posted_[i]);
      moved = true;
    }
    ch.try_drain();  // writes what a socket did not take before (and reads credits)
  }
  return moved;
}

// Arrived slots go into free GPU slots (the GPU's head says which), then tail publishes them.
bool NetProxy::move_recvs() {
  bool moved = false;
  for (std::size_t i = 0; i < recvs_.size(); ++i) {
    const NetFifo& f = recvs_[i];
    RecvChannel& ch = channels_->recv(sends_.size() + i);
    while (received_[i] < load_acquire(f.head) + gpu::kFifoSlots) {
      std::size_t bytes = 0;
      const void* slot = ch.try_peek(&bytes);
      if (!slot) break;
      std::memcpy(f.slots + (received_[i] % gpu::kFifoSlots) * slot_, slot, bytes);
      ch.release();
      store_release(f.tail, ++received_[i]);
      moved = true;
    }
  }
  return moved;
}

void NetProxy::loop() {
  try {
    int idle = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      const bool moved = move_sends() | move_recvs();
      idle = moved ? 0 : idle + 1;
      if (idle > kIdleSpins) std::this_thread::yield();
    }
    for (std::size_t i = 0; i < sends_.size(); ++i) channels_->send(i).try_drain();
  } catch (...) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    error_ = std::current_exception();
  }
}

}  // namespace ccbench
