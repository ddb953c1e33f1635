#include "tests/benchmarks/ofi_raw.h"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "core/error.h"
#include "transports/ofi/fabric.h"
#include "transports/ofi/ofi_transport.h"
#include "transports/slot_memory.h"

namespace ccbench {
namespace {

// Cookies and tags of the loop's own operations.
constexpr std::uint64_t kWriteCookie = 1, kEndSendCookie = 2, kEndRecvCookie = 3;
constexpr std::uint64_t kEndTag = 1, kAnswerTag = 2;
constexpr std::uint64_t kStopWord = ~0ull;  // an end message that stops serve()

// The source byte at offset `o` of the channel rows' buffer (channel_bench.cpp fills it so).
unsigned char source_byte(std::size_t o) { return static_cast<unsigned char>(o % 251); }

class Loop final : public OfiRawLoop {
 public:
  Loop(MPI_Comm comm, const RankLayout& layout, const std::string& provider, std::size_t slot_bytes, int depth,
       const char* source, std::size_t source_bytes)
      : comm_(comm), slot_(slot_bytes), depth_(depth), source_(source), source_bytes_(source_bytes) {
    MPI_Comm_rank(comm, &rank_);
    OfiOptions o;
    o.provider = provider;
    o.protocol = OfiProtocol::rma;
    set_ofi_options(o);
    const OfiSelection s = select_ofi(layout, slot_bytes);
    plan_ = s.plan;
    catalog_ = OfiCatalog::query(false);
    ep_ = catalog_->open(s.entry, s.plan);
    exchange_addresses();
    control_.allocate(2 * sizeof(std::uint64_t), 1);
    control_mr_ = ep_->register_memory(control_.slot(0), control_.stride, false, -1, 1);
    if (rank_ == 1) {
      slots_.allocate_huge(slot_, depth_);  // as the rma channels' receivers allocate theirs
      slots_mr_ = ep_->register_memory(slots_.slot(0), slots_.stride * static_cast<std::size_t>(depth_), true, -1, 2);
      const std::array<std::uint64_t, 3> mine = {slots_mr_->key(),
                                                 ofi_remote_address(plan_, reinterpret_cast<std::uint64_t>(slots_.slot(0)), 0),
                                                 slots_.stride};
      MPI_Send(mine.data(), 3, MPI_UINT64_T, 0, 0, comm_);
      post_end_receive();
    } else {
      source_mr_ = ep_->register_memory(const_cast<char*>(source), source_bytes, false, -1, 3);
      std::array<std::uint64_t, 3> theirs{};
      MPI_Recv(theirs.data(), 3, MPI_UINT64_T, 1, 0, comm_, MPI_STATUS_IGNORE);
      key_ = theirs[0];
      base_ = theirs[1];
      stride_ = theirs[2];
    }
  }
  ~Loop() override {
    if (ep_) ep_->quiesce();
  }

  std::string op() const override { return plan_.notify_after_write ? "fi_write" : "fi_writedata"; }

  void stream(std::uint64_t bytes) override {
    const std::uint64_t pieces = (bytes + slot_ - 1) / slot_;
    std::uint64_t posted = 0, done = 0;
    while (done < pieces) {
      while (posted < pieces && posted - done < static_cast<std::uint64_t>(depth_) && write(posted, bytes)) ++posted;
      done += count(kWriteCookie);
    }
    end_iteration(bytes);
  }

  bool stop() override {
    end_iteration(kStopWord);
    int verdict = 0;
    MPI_Recv(&verdict, 1, MPI_INT, 1, 1, comm_, MPI_STATUS_IGNORE);
    return verdict == 1;
  }

  void serve(std::uint64_t bytes) override {
    for (;;) {
      if (wait_end() == kStopWord) {
        int verdict = slots_hold_last_pieces(bytes) ? 1 : 0;
        MPI_Send(&verdict, 1, MPI_INT, 0, 1, comm_);
        return;
      }
      answer();
    }
  }

 private:
  void exchange_addresses() {
    const OfiAddrBlock mine = encode_ofi_address(ep_->address());
    std::vector<OfiAddrBlock> all(2);
    MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), static_cast<int>(mine.size()),
                  MPI_BYTE, comm_);
    peer_ = ep_->insert_peers({decode_ofi_address(all[0], 0), decode_ofi_address(all[1], 1)})[1 - rank_];
  }

  // Piece j of an iteration: from the source where the channel rows take it, into slot j % depth.
  std::size_t source_offset(std::uint64_t j) const { return (j * slot_) % (source_bytes_ - slot_); }
  std::size_t piece_bytes(std::uint64_t j, std::uint64_t bytes) const {
    return static_cast<std::size_t>(std::min<std::uint64_t>(slot_, bytes - j * slot_));
  }

  bool write(std::uint64_t j, std::uint64_t bytes) {
    const std::uint64_t remote = base_ + (j % static_cast<std::uint64_t>(depth_)) * stride_;
    const std::optional<std::uint64_t> data = plan_.notify_after_write ? std::nullopt : std::optional<std::uint64_t>(j);
    return ep_->write(source_ + source_offset(j), piece_bytes(j, bytes), source_mr_.get(), peer_, remote, key_, data,
                      kWriteCookie);
  }

  // Polls once: how many completions with `cookie` came (remote writes' CQ data is dropped).
  int count(std::uint64_t cookie) {
    batch_.clear();
    ep_->poll(batch_, 16);
    int n = 0;
    for (const OfiCompletion& c : batch_) {
      if (c.err) fail(ExitCode::runtime, "ofi raw loop: an operation failed: {} (provider: {})", c.err_text, c.prov_text);
      if (!c.remote_data && c.cookie == cookie) ++n;
      if (!c.remote_data && c.cookie == kEndRecvCookie) end_arrived_ = true;
    }
    return n;
  }

  std::uint64_t* word(int i) const { return reinterpret_cast<std::uint64_t*>(control_.slot(0)) + i; }

  // Rank 0: the end message carrying `value`, then rank 1's answer (none after a stop).
  void end_iteration(std::uint64_t value) {
    *word(0) = value;
    if (value != kStopWord) post_end_receive();  // rank 1's answer lands in word 1
    while (!ep_->tsend(word(0), sizeof(std::uint64_t), control_mr_.get(), peer_, kEndTag, kEndSendCookie)) count(0);
    for (int sent = 0; sent == 0;) sent = count(kEndSendCookie);
    while (value != kStopWord && !end_arrived_) count(0);
    end_arrived_ = false;
  }

  // Rank 1: waits for rank 0's end message; its value.
  std::uint64_t wait_end() {
    while (!end_arrived_) count(0);
    end_arrived_ = false;
    const std::uint64_t v = *word(1);
    post_end_receive();
    return v;
  }

  void answer() {
    *word(0) = 0;
    while (!ep_->tsend(word(0), sizeof(std::uint64_t), control_mr_.get(), peer_, kAnswerTag, kEndSendCookie)) count(0);
    for (int sent = 0; sent == 0;) sent = count(kEndSendCookie);
  }

  void post_end_receive() {
    const std::uint64_t tag = rank_ == 1 ? kEndTag : kAnswerTag;
    while (!ep_->trecv(word(1), sizeof(std::uint64_t), *control_mr_, tag, kEndRecvCookie)) count(0);
  }

  // Rank 1, after the last iteration of `bytes`: its slots hold the last `depth` pieces written.
  bool slots_hold_last_pieces(std::uint64_t bytes) const {
    const std::uint64_t pieces = (bytes + slot_ - 1) / slot_;
    for (std::uint64_t j = pieces > static_cast<std::uint64_t>(depth_) ? pieces - depth_ : 0; j < pieces; ++j) {
      const auto* got = reinterpret_cast<const unsigned char*>(slots_.slot(static_cast<int>(j % depth_)));
      const std::size_t from = source_offset(j);
      for (std::size_t b = 0; b < piece_bytes(j, bytes); ++b)
        if (got[b] != source_byte(from + b)) return false;
    }
    return true;
  }

  MPI_Comm comm_;
  int rank_ = 0;
  std::size_t slot_;
  int depth_;
  const char* source_;
  std::size_t source_bytes_;
  OfiPlan plan_;
  std::unique_ptr<OfiCatalog> catalog_;
  std::unique_ptr<OfiEndpoint> ep_;  // declared after the catalog: closed first
  std::uint64_t peer_ = 0, key_ = 0, base_ = 0, stride_ = 0;
  SlotMemory control_, slots_;
  std::unique_ptr<OfiMemory> control_mr_, slots_mr_, source_mr_;
  std::vector<OfiCompletion> batch_;
  bool end_arrived_ = false;
};

}  // namespace

std::unique_ptr<OfiRawLoop> OfiRawLoop::open(MPI_Comm comm, const RankLayout& layout, const std::string& provider,
                                             std::size_t slot_bytes, int depth, const char* source,
                                             std::size_t source_bytes) {
  return std::make_unique<Loop>(comm, layout, provider, slot_bytes, depth, source, source_bytes);
}

}  // namespace ccbench
