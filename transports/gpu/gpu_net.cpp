#include "transports/gpu/gpu_net.h"

#include "core/error.h"
#include "core/knobs.h"
#include "transports/gpu/gpu_conn.h"
#include "core/transport_names.h"

namespace ccbench {

int net_proxy_threads() { return static_cast<int>(env_int(Knob::gpu_net_threads)); }

NetProxy::NetProxy(MPI_Comm comm, const RankLayout& layout, std::size_t slot_bytes, std::vector<NetFifo> sends,
                   std::vector<NetFifo> recvs, std::chrono::milliseconds timeout, const NetBackend& backend)
    : slot_(slot_bytes) {
  if (backend.slots_gpu >= 0 && backend.transport != name(Transport::ib) && backend.transport != name(Transport::ofi))
    fail(ExitCode::runtime, "net/{}: FIFO slots in GPU memory need a backend that moves them in place (ib, ofi)",
         backend.transport);
  const int threads = net_proxy_threads();
  for (int i = 0; i < threads; ++i) workers_.push_back(std::make_unique<Worker>());
  for (const NetFifo& f : sends) workers_[static_cast<std::size_t>(f.tag % threads)]->sends.push_back(f);
  for (const NetFifo& f : recvs) workers_[static_cast<std::size_t>(f.tag % threads)]->recvs.push_back(f);
  for (const NetFifo& f : sends)
    if (!f.sizes) fail(ExitCode::runtime, "net: the FIFO toward rank {} (tag {}) has no step sizes", f.peer, f.tag);
  for (const auto* fifos : {&sends, &recvs})
    for (const NetFifo& f : *fifos) {
      const std::string which = fmt::format("of the net FIFO with rank {} (tag {})", f.peer, f.tag);
      require_flag_aligned(f.tail, ("tail " + which).c_str());
      require_flag_aligned(f.head, ("head " + which).c_str());
    }
  ChannelOptions o;
  o.slot_bytes = slot_bytes;
  o.depth = gpu::kFifoSlots;
  o.transport = backend.transport;
  o.timeout = timeout;
  // One collective connect per worker, in the same order on every rank.
  for (auto& w : workers_) {
    std::vector<ChannelRequest> requests;
    // The FIFO slots are the channels' own (ib registers them; tcp reads and writes them itself).
    for (const NetFifo& f : w->sends) requests.push_back({f.peer, f.tag, true, f.slots, backend.slots_gpu});
    for (const NetFifo& f : w->recvs) requests.push_back({f.peer, f.tag, false, f.slots, backend.slots_gpu});
    w->channels = connect_channels(comm, layout, requests, o);
    for (std::size_t i = 0; i < requests.size(); ++i)
      if (requests[i].send ? !w->channels->send(i).direct() : !w->channels->recv(i).direct())
        fail(ExitCode::runtime, "net: the {} channel with rank {} has no zero-copy path", o.transport,
             requests[i].peer);
    w->posted.assign(w->sends.size(), 0);
    w->granted.assign(w->sends.size(), 0);
    w->received.assign(w->recvs.size(), 0);
    w->freed.assign(w->recvs.size(), 0);
  }
  // An idle pass costs one recv() per channel waiting for data (sends owe no credits when idle).
  // On stop, each thread writes what its sockets did not take yet.
  for (auto& w : workers_)
    if (!w->sends.empty() || !w->recvs.empty())
      threads_.start([this, p = w.get()] { return move_sends(*p) | move_recvs(*p); }, {},
                     [p = w.get()] {
                       for (std::size_t i = 0; i < p->sends.size(); ++i) p->channels->send(i).try_drain();
                     });
}

NetProxy::~NetProxy() { threads_.stop(); }

// Staged steps the GPU published go out from the staging slots themselves; a slot is granted
// back to the GPU once the socket has taken its bytes.
bool NetProxy::move_sends(Worker& w) {
  bool moved = false;
  for (std::size_t i = 0; i < w.sends.size(); ++i) {
    const NetFifo& f = w.sends[i];
    SendChannel& ch = w.channels->send(i);
    DirectSend& d = *ch.direct();
    while (w.posted[i] < host_load_acquire(f.tail)) {
      const std::uint64_t step = w.posted[i];
      const std::uint64_t bytes = f.sizes[step % gpu::kFifoSlots];
      if (bytes > slot_)
        fail(ExitCode::runtime, "net: the GPU published step {} of {} bytes toward rank {} into slots of {}", step,
             bytes, f.peer, slot_);
      if (!d.try_post_from(f.slots + (step % gpu::kFifoSlots) * slot_, bytes)) break;
      ++w.posted[i];
      moved = true;
    }
    ch.try_drain();  // writes what a socket did not take before (and reads credits)
    if (d.sent() > w.granted[i]) {
      w.granted[i] = d.sent();
      host_store_release(f.head, w.granted[i]);
      moved = true;
    }
  }
  return moved;
}

// Slots the GPU freed (its head) release their messages, which sends the credits; arrived
// messages are read straight into the free GPU slots, then tail publishes them.
bool NetProxy::move_recvs(Worker& w) {
  bool moved = false;
  for (std::size_t i = 0; i < w.recvs.size(); ++i) {
    const NetFifo& f = w.recvs[i];
    RecvChannel& ch = w.channels->recv(w.sends.size() + i);
    DirectRecv& d = *ch.direct();
    const std::uint64_t head = host_load_acquire(f.head);
    for (; w.freed[i] < head; ++w.freed[i]) ch.release();
    while (w.received[i] < head + gpu::kFifoSlots) {
      std::size_t bytes = 0;
      if (!d.try_receive_into(f.slots + (w.received[i] % gpu::kFifoSlots) * slot_, slot_, &bytes)) break;
      host_store_release(f.tail, ++w.received[i]);
      moved = true;
    }
  }
  return moved;
}

}  // namespace ccbench
