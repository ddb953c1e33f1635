// The ofi transport's channels under mpirun, over real libfabric providers (tcp;ofi_rxm, and shm
// where the ranks share a host), each with both protocols (rma: writes with remote CQ data;
// tagged: messages); the collectives over ofi are checked from ccbench's results files
// (ofi_runs.py):
//   - a ring of slot channels, several per pair (completions routed by channel), every size from 0
//     to a whole slot, bytes and lengths checked, the label naming provider and protocol;
//   - credits: a sender with `depth` slots unreleased gets no more until the receiver releases;
//   - zero-copy ends (the GPU net proxy's calls) with the caller's slots: sends straight from them,
//     receives landing in the slot the peer wrote, in order, only a message's bytes written;
//   - zero-copy sends from any memory (the CPU executors'), offered where the plan allows it, the
//     bytes no longer read once sent() counts them;
//   - a peer that closes its endpoint mid-transfer is Error(runtime) naming the provider and the
//     peer (tcp;ofi_rxm: the connection resets under the next send);
//   - names that do not exist: Error(usage) listing the providers or domains there are.
// EFA, cxi, verbs and PSM3 cannot run here (no such NIC); CCBENCH_OFI_TEST_PROVIDER=efa runs the
// same checks over that provider instead of tcp;ofi_rxm on a machine that has it. Exits 1 if any
// rank saw a failure, 77 (skipped) when this build has no libfabric.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/mpi/mpi_checks.h"
#include "transports/connect.h"
#include "transports/ofi/ofi_transport.h"

namespace ccbench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace mpi_checks;

ChannelOptions ofi_channels(size_t slot, int depth) {
  ChannelOptions o;
  o.transport = "ofi";
  o.slot_bytes = slot;
  o.depth = depth;
  o.timeout = std::chrono::seconds(30);
  return o;
}

struct Setting {
  std::string provider;  // as --ofi-provider takes it
  OfiProtocol protocol;
  std::string label() const { return fmt::format("{} {}", provider, name(protocol)); }
};

// Message m's byte i, from sender `from` on channel `c`; its size walks from 0 to a whole slot.
unsigned char pattern(int from, int c, std::uint64_t m, size_t i) {
  return static_cast<unsigned char>(from * 31 + c * 7 + m * 13 + i * 3 + 1);
}
size_t size_of(std::uint64_t m, size_t slot) {
  const size_t sizes[] = {0, 1, 7, 64, 1000, slot - 1, slot};
  return sizes[m % (sizeof sizes / sizeof sizes[0])];
}

// A ring of kChannels slot channels toward the next rank (and from the previous), `count`
// messages on each, all moved in one loop so that completions of every channel interleave.
void slot_ring(const RankLayout& layout, const Setting& s, const std::string& expected_label) {
  constexpr int kChannels = 3, kCount = 100, kDepth = 3;
  constexpr size_t kSlot = 8192;
  const int next = (g_rank + 1) % g_n, prev = (g_rank + g_n - 1) % g_n;
  std::vector<ChannelRequest> req;
  for (int c = 0; c < kChannels; ++c) req.push_back({next, 10 + c, true});
  for (int c = 0; c < kChannels; ++c) req.push_back({prev, 10 + c, false});
  auto set = connect_channels(MPI_COMM_WORLD, layout, req, ofi_channels(kSlot, kDepth));
  const std::string what = "slot ring [" + s.label() + "]";
  check(set->label() == expected_label, what + ": label " + set->label() + ", expected " + expected_label);
  std::vector<std::uint64_t> sent(kChannels, 0), got(kChannels, 0);
  long bad = 0;
  const auto until = Clock::now() + std::chrono::seconds(60);
  auto busy = [&] {
    for (int c = 0; c < kChannels; ++c)
      if (sent[c] < kCount || got[c] < kCount) return true;
    return false;
  };
  while (busy() && Clock::now() < until) {
    for (int c = 0; c < kChannels; ++c) {
      SendChannel& tx = set->send(static_cast<size_t>(c));
      if (sent[c] < kCount)
        if (auto* p = static_cast<unsigned char*>(tx.try_acquire())) {
          const size_t n = size_of(sent[c], kSlot);
          for (size_t i = 0; i < n; ++i) p[i] = pattern(g_rank, c, sent[c], i);
          tx.post(n);
          ++sent[c];
        }
      RecvChannel& rx = set->recv(static_cast<size_t>(kChannels + c));
      size_t n = 0;
      if (const auto* p = static_cast<const unsigned char*>(rx.try_peek(&n))) {
        bad += n != size_of(got[c], kSlot);
        for (size_t i = 0; i < n; ++i) bad += p[i] != pattern(prev, c, got[c], i);
        rx.release();
        ++got[c];
      }
    }
  }
  for (int c = 0; c < kChannels; ++c)
    check(got[c] == kCount, fmt::format("{}: channel {}: {} of {} messages arrived", what, c, got[c], kCount));
  check(bad == 0, fmt::format("{}: {} wrong sizes or bytes", what, bad));
  for (int c = 0; c < kChannels; ++c)
    check(eventually([&] { return set->send(static_cast<size_t>(c)).try_drain(); }), what + ": drained");
  MPI_Barrier(MPI_COMM_WORLD);  // nobody closes while a peer still reads
}

// With depth 2 and nothing released, a third slot is refused; one release lets one more through.
void credits_bound(const RankLayout& layout, const Setting& s) {
  const int next = (g_rank + 1) % g_n, prev = (g_rank + g_n - 1) % g_n;
  auto set = connect_channels(MPI_COMM_WORLD, layout, {{next, 20, true}, {prev, 20, false}}, ofi_channels(4096, 2));
  const std::string what = "credits [" + s.label() + "]";
  SendChannel& tx = set->send(0);
  RecvChannel& rx = set->recv(1);
  for (int i = 0; i < 2; ++i) {
    void* p = nullptr;
    check(eventually([&] { return (p = tx.try_acquire()) != nullptr; }), what + ": a slot");
    if (p) tx.post(16);
  }
  size_t n = 0;
  check(eventually([&] { return rx.try_peek(&n) != nullptr; }), what + ": the first message arrives");
  check(!eventually([&] { return tx.try_acquire() != nullptr; }, 300), what + ": no third slot while both are held");
  MPI_Barrier(MPI_COMM_WORLD);
  rx.release();
  check(eventually([&] { return tx.try_acquire() != nullptr; }), what + ": a slot once the receiver released one");
  tx.post(8);
  for (int i = 0; i < 2; ++i) {
    check(eventually([&] { return rx.try_peek(&n) != nullptr; }), what + ": the others arrive");
    rx.release();
  }
  check(eventually([&] { return tx.try_drain(); }), what + ": drained");
  MPI_Barrier(MPI_COMM_WORLD);
}

// Zero-copy ends over the caller's slots, as the GPU net proxy drives them (transports/gpu/gpu_net.cpp).
void direct_ring(const RankLayout& layout, const Setting& s) {
  constexpr int kDepth = 4, kCount = 200;
  constexpr size_t kSlot = 16384;
  constexpr unsigned char kFiller = 0xee;
  const int next = (g_rank + 1) % g_n, prev = (g_rank + g_n - 1) % g_n;
  std::vector<unsigned char> out(kDepth * kSlot), in(kDepth * kSlot, kFiller);
  std::vector<ChannelRequest> req = {{next, 30, true, reinterpret_cast<char*>(out.data())},
                                     {prev, 30, false, reinterpret_cast<char*>(in.data())}};
  auto set = connect_channels(MPI_COMM_WORLD, layout, req, ofi_channels(kSlot, kDepth));
  const std::string what = "zero-copy ring [" + s.label() + "]";
  DirectSend* tx = set->send(0).direct();
  DirectRecv* rx = set->recv(1).direct();
  check(tx && rx, what + ": caller slots give zero-copy ends");
  if (!tx || !rx) return;
  expect_error(ExitCode::runtime, what + ": a send from memory not registered", [&] {
    unsigned char elsewhere[16] = {};
    tx->try_post_from(elsewhere, sizeof elsewhere);
  }, {"outside the registered slots"});
  std::uint64_t posted = 0, got = 0, freed = 0;
  std::vector<size_t> lengths(kDepth);
  long bad = 0, past = 0;
  const auto until = Clock::now() + std::chrono::seconds(60);
  while ((posted < kCount || freed < kCount) && Clock::now() < until) {
    if (posted < kCount && posted < tx->sent() + kDepth) {  // the slot's previous post has left
      unsigned char* b = &out[(posted % kDepth) * kSlot];
      const size_t n = size_of(posted, kSlot);
      for (size_t i = 0; i < n; ++i) b[i] = pattern(g_rank, 0, posted, i);
      if (tx->try_post_from(b, n)) ++posted;
    }
    size_t n = 0;
    if (got < kCount && got < freed + kDepth && rx->try_receive_into(&in[(got % kDepth) * kSlot], kSlot, &n))
      lengths[got++ % kDepth] = n;
    if (freed < got) {
      unsigned char* b = &in[(freed % kDepth) * kSlot];
      const size_t want = size_of(freed, kSlot);
      bad += lengths[freed % kDepth] != want;
      for (size_t i = 0; i < want; ++i) bad += b[i] != pattern(prev, 0, freed, i);
      for (size_t i = want; i < kSlot; ++i) past += b[i] != kFiller;
      std::fill(b, b + kSlot, kFiller);
      set->recv(1).release();
      ++freed;
    }
    set->send(0).try_drain();
  }
  check(freed == kCount, fmt::format("{}: {} of {} messages arrived", what, freed, kCount));
  check(bad == 0, fmt::format("{}: {} wrong sizes or bytes", what, bad));
  check(past == 0, fmt::format("{}: {} bytes written past the messages' sizes", what, past));
  check(eventually([&] { return set->send(0).try_drain() && tx->sent() == kCount; }), what + ": every post sent");
  if (g_n > 1)
    expect_error(ExitCode::runtime, what + ": a receive into another slot", [&] {
      size_t n = 0;
      rx->try_receive_into(&in[((got + 1) % kDepth) * kSlot], kSlot, &n);
    }, {"zero-copy receive from rank", "but the peer writes slot"});
  MPI_Barrier(MPI_COMM_WORLD);
}

// Zero-copy sends from any of the caller's memory, never registered (the CPU executors' use):
// offered exactly where the plan says the provider needs no registration to send; every message
// goes from its own place in a buffer that is overwritten as soon as sent() counts the post, so
// a transport still reading it after that would deliver the overwritten bytes.
void any_memory_sends(const RankLayout& layout, const Setting& s) {
  constexpr int kDepth = 3, kCount = 150;
  constexpr size_t kSlot = 16384;
  constexpr unsigned char kOverwritten = 0x5a;
  const int next = (g_rank + 1) % g_n, prev = (g_rank + g_n - 1) % g_n;
  auto set = connect_channels(MPI_COMM_WORLD, layout, {{next, 35, true}, {prev, 35, false}},
                              ofi_channels(kSlot, kDepth));
  const std::string what = "zero-copy from any memory [" + s.label() + "]";
  DirectSend* tx = set->send(0).direct();
  const bool offered = select_ofi(layout, kSlot).plan.send_any_memory;
  check((tx != nullptr) == offered, fmt::format("{}: a zero-copy send end {}", what, offered ? "offered" : "withheld"));
  check(set->recv(1).direct() == nullptr, what + ": no zero-copy receive end without caller slots");
  if (!tx) return;
  std::vector<unsigned char> from(kCount * kSlot);  // message m at m * kSlot, never reused
  std::uint64_t posted = 0, cleared = 0, got = 0;
  long bad = 0;
  RecvChannel& rx = set->recv(1);
  const auto until = Clock::now() + std::chrono::seconds(60);
  while ((posted < kCount || got < kCount || cleared < kCount) && Clock::now() < until) {
    if (posted < kCount) {
      unsigned char* b = &from[posted * kSlot];
      const size_t n = size_of(posted, kSlot);
      for (size_t i = 0; i < n; ++i) b[i] = pattern(g_rank, 1, posted, i);
      if (tx->try_post_from(b, n)) ++posted;
    }
    for (; cleared < tx->sent(); ++cleared) std::memset(&from[cleared * kSlot], kOverwritten, kSlot);
    size_t n = 0;
    if (const auto* p = static_cast<const unsigned char*>(rx.try_peek(&n))) {
      bad += n != size_of(got, kSlot);
      for (size_t i = 0; i < n; ++i) bad += p[i] != pattern(prev, 1, got, i);
      rx.release();
      ++got;
    }
    set->send(0).try_drain();
  }
  check(got == kCount && cleared == kCount, fmt::format("{}: {} of {} messages arrived, {} counted sent", what, got,
                                                         kCount, cleared));
  check(bad == 0, fmt::format("{}: {} wrong sizes or bytes", what, bad));
  MPI_Barrier(MPI_COMM_WORLD);
}

// Ranks 0 and 1 connect both ways and exchange a slot each way; then rank 1 closes its endpoint
// and rank 0 sends on: its transfers must fail naming the provider and rank 1, within seconds.
void peer_disappears(const RankLayout& layout, const Setting& s, const std::string& provider) {
  constexpr size_t kSlot = 65536;
  std::vector<ChannelRequest> req;
  if (g_rank == 0) req = {{1, 40, true}, {1, 40, false}};
  if (g_rank == 1) req = {{0, 40, true}, {0, 40, false}};
  auto set = connect_channels(MPI_COMM_WORLD, layout, req, ofi_channels(kSlot, 2));
  const std::string what = "peer gone [" + s.label() + "]";
  if (g_rank <= 1) {  // one slot each way, so that both directions are connected
    SendChannel& tx = set->send(0);
    RecvChannel& rx = set->recv(1);
    void* p = nullptr;
    if (!eventually([&] { return (p = tx.try_acquire()) != nullptr; })) failure("{}: no slot", what);
    if (p) tx.post(kSlot);
    size_t n = 0;
    if (!eventually([&] { tx.try_drain(); return rx.try_peek(&n) != nullptr; })) failure("{}: nothing arrived", what);
    else rx.release();
    if (!eventually([&] { return tx.try_drain() && tx.try_acquire() != nullptr; })) failure("{}: no credit back", what);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 1) set.reset();  // the peer's endpoint closes: rank 0 still sends
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    SendChannel& tx = set->send(0);
    const auto t0 = Clock::now();
    expect_error(ExitCode::runtime, what, [&] {
      const auto until = Clock::now() + std::chrono::seconds(20);
      while (Clock::now() < until) {
        if (void* p = tx.try_acquire()) {
          std::memset(p, 3, kSlot);
          tx.post(kSlot);
        }
        tx.try_drain();
      }
    }, {"ofi (" + provider + "): fi_", "to rank 1 (host " + layout.host_of[1] + ") failed", "gone"});
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    check(secs < 10, fmt::format("{}: noticed after {:.1f} s", what, secs));
  }
  set.reset();
  MPI_Barrier(MPI_COMM_WORLD);
}

void bad_names(const RankLayout& layout) {
  const std::vector<ChannelRequest> ring = {{(g_rank + 1) % g_n, 50, true}, {(g_rank + g_n - 1) % g_n, 50, false}};
  OfiOptions o;
  o.provider = "carrier-pigeon";
  set_ofi_options(o);
  expect_error(ExitCode::usage, "--ofi-provider carrier-pigeon",
               [&] { connect_channels(MPI_COMM_WORLD, layout, ring, ofi_channels(4096, 2)); },
               {"--ofi-provider: 'carrier-pigeon' is not a provider of this libfabric", "it has: ", "tcp;ofi_rxm ("});
  o.provider = "tcp";
  o.domain = "no-such-nic";
  set_ofi_options(o);
  expect_error(ExitCode::usage, "--ofi-domain no-such-nic",
               [&] { connect_channels(MPI_COMM_WORLD, layout, ring, ofi_channels(4096, 2)); },
               {"--ofi-domain: provider tcp;ofi_rxm has no domain 'no-such-nic' here (valid: ", "lo"});
  set_ofi_options({});
  auto set = connect_channels(MPI_COMM_WORLD, layout, ring, ChannelOptions{});
  check(set->label().find("ofi") == std::string::npos, "auto chose " + set->label());
}

// The provider's whole name as libfabric gives it ("tcp" is tcp;ofi_rxm in libfabric 1.17).
std::string full_name(const std::string& provider) { return provider == "tcp" ? "tcp;ofi_rxm" : provider; }

// tcp;ofi_rxm (or CCBENCH_OFI_TEST_PROVIDER, this test's own variable: ccbench never reads it),
// and shm where the ranks share a host.
std::vector<std::string> providers_to_test(const RankLayout& layout) {
  const char* named = std::getenv("CCBENCH_OFI_TEST_PROVIDER");
  std::vector<std::string> out = {named && *named ? named : "tcp"};
  if (layout.hosts == 1) out.push_back("shm");
  return out;
}

}  // namespace
}  // namespace ccbench

int main(int argc, char** argv) {
  using namespace ccbench;
  using namespace ccbench::mpi_checks;
  start(&argc, &argv);
  const auto t0 = Clock::now();
  try {
    const RankLayout layout = real_layout();
    if (auto why = ofi_unavailable_reason()) {
      if (g_rank == 0) std::printf("SKIPPED: %s\n", why->c_str());
      MPI_Finalize();
      return 77;
    }
    for (const std::string& p : providers_to_test(layout))
      for (OfiProtocol proto : {OfiProtocol::rma, OfiProtocol::tagged}) {
        const Setting s{p, proto};
        OfiOptions o;
        o.provider = p;
        o.protocol = proto;
        set_ofi_options(o);
        if (g_rank == 0) std::printf("# %s\n", s.label().c_str());
        slot_ring(layout, s, fmt::format("ofi:{}:{}", full_name(p), name(proto)));
        credits_bound(layout, s);
        direct_ring(layout, s);
        any_memory_sends(layout, s);
        if (g_n >= 2 && p != "shm") peer_disappears(layout, s, full_name(p));
      }
    if (g_n >= 2) bad_names(layout);
  } catch (const Error& e) {
    failure("stopped by an error: {}", e.what());
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(e.code()));
  }
  return finish(t0);
}
