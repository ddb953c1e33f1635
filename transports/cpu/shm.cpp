#include "transports/cpu/shm.h"

#include <cerrno>
#include <cstring>
#include <new>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/error.h"

namespace ccbench {

namespace {

constexpr std::uint64_t kMagic = 0x6363626e63687331ull;  // "ccbnchs1"
constexpr size_t kPage = 4096;
// 128 bytes apart: adjacent-line prefetchers pair 64-byte lines.
constexpr size_t kLine = 128;

static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "shm channels need lock-free 64-bit atomics");

struct Header {
  std::uint64_t magic;
  std::uint64_t slot_bytes;
  std::uint64_t depth;
  std::uint64_t stride;        // bytes from one slot to the next
  std::uint64_t slots_offset;  // bytes from the segment start to slot 0
  std::uint64_t total_bytes;
};
constexpr size_t kTailOffset = kLine;
constexpr size_t kHeadOffset = 2 * kLine;
constexpr size_t kSizesOffset = 3 * kLine;

size_t round_up(size_t a, size_t b) { return (a + b - 1) / b * b; }

struct Geometry {
  size_t stride, slots_offset, total;
};
Geometry geometry(size_t slot_bytes, std::uint64_t depth) {
  Geometry g;
  g.stride = round_up(slot_bytes, kPage);
  g.slots_offset = round_up(kSizesOffset + depth * sizeof(std::uint64_t), kPage);
  g.total = g.slots_offset + depth * g.stride;
  return g;
}

std::string random_name() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t r = getrandom(bytes + got, sizeof bytes - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(ExitCode::runtime, "getrandom() for a shared-memory segment name failed: {}", std::strerror(errno));
    }
    got += static_cast<size_t>(r);
  }
  std::string name = "/ccbench-";
  for (unsigned char b : bytes) name += fmt::format("{:02x}", b);
  return name;
}

// Maps fd whole; closes nothing.
void map_segment(ShmSegment& seg, int fd, size_t bytes, const std::string& name) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    fail(ExitCode::precondition, "mmap of shared-memory segment {} ({} bytes) failed: {}", name, bytes,
         std::strerror(errno));
  seg.base = p;
  seg.bytes = bytes;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

ShmSegment::~ShmSegment() {
  if (base) munmap(base, bytes);
}

ShmRecvChannel::ShmRecvChannel(size_t slot_bytes, int depth) : slot_bytes_(slot_bytes) {
  if (slot_bytes == 0 || slot_bytes % 64 != 0 || depth < 1)
    fail(ExitCode::usage,
         "shm channel geometry {} bytes x {} slots is invalid: slots must be a positive "
         "multiple of 64 bytes and depth at least 1",
         slot_bytes, depth);
  depth_ = static_cast<std::uint64_t>(depth);
  const Geometry g = geometry(slot_bytes, depth_);
  stride_ = g.stride;

  int raw = -1;
  for (int attempt = 0; attempt < 4 && raw < 0; ++attempt) {  // a name clash is astronomically rare
    name_ = random_name();
    raw = shm_open(name_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (raw < 0 && errno != EEXIST) break;
  }
  if (raw < 0)
    fail(ExitCode::precondition, "shm_open({}) failed: {} (is /dev/shm mounted and writable?)", name_,
         std::strerror(errno));
  Fd fd(raw);
  linked_ = true;
  try {
    if (ftruncate(fd.get(), static_cast<off_t>(g.total)) != 0)
      fail(ExitCode::precondition, "ftruncate of shared-memory segment {} to {} bytes failed: {}", name_, g.total,
           std::strerror(errno));
    // Reserve the pages now: on a full tmpfs a later first touch would kill us with SIGBUS.
    int rc = posix_fallocate(fd.get(), 0, static_cast<off_t>(g.total));
    if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL)
      fail(ExitCode::precondition,
           "cannot reserve {} bytes in /dev/shm for a channel: {} (free space in /dev/shm, "
           "lower CCBENCH_CPU_SLOT_BYTES / CCBENCH_CPU_SLOT_DEPTH, or use --transport mpi)",
           g.total, std::strerror(rc));
    map_segment(seg_, fd.get(), g.total, name_);
  } catch (...) {
    unlink();
    throw;
  }

  char* base = static_cast<char*>(seg_.base);
  auto* h = reinterpret_cast<Header*>(base);
  h->slot_bytes = slot_bytes;
  h->depth = depth_;
  h->stride = g.stride;
  h->slots_offset = g.slots_offset;
  h->total_bytes = g.total;
  tail_ = new (base + kTailOffset) std::atomic<std::uint64_t>(0);
  head_ = new (base + kHeadOffset) std::atomic<std::uint64_t>(0);
  sizes_ = reinterpret_cast<const std::uint64_t*>(base + kSizesOffset);
  slots_ = base + g.slots_offset;
  std::atomic_thread_fence(std::memory_order_release);
  h->magic = kMagic;
}

ShmRecvChannel::~ShmRecvChannel() { unlink(); }

void ShmRecvChannel::unlink() {
  if (!linked_) return;
  linked_ = false;
  shm_unlink(name_.c_str());
}

const void* ShmRecvChannel::try_peek(size_t* bytes) {
  if (head_local_ == tail_cached_) {
    tail_cached_ = tail_->load(std::memory_order_acquire);
    if (head_local_ == tail_cached_) return nullptr;
  }
  const std::uint64_t i = head_local_ % depth_;
  *bytes = static_cast<size_t>(sizes_[i]);
  return slots_ + i * stride_;
}

void ShmRecvChannel::release() { head_->store(++head_local_, std::memory_order_release); }

ShmSendChannel::ShmSendChannel(const std::string& name, size_t slot_bytes, int depth) : slot_bytes_(slot_bytes) {
  depth_ = static_cast<std::uint64_t>(depth);
  const Geometry g = geometry(slot_bytes, depth_);
  stride_ = g.stride;
  Fd fd(shm_open(name.c_str(), O_RDWR, 0));
  if (fd.get() < 0)
    fail(ExitCode::precondition,
         "cannot open the peer's shared-memory segment {}: {} (ranks on one host that do "
         "not share /dev/shm, e.g. separate containers, need --transport mpi)",
         name, std::strerror(errno));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || static_cast<size_t>(st.st_size) < g.total)
    fail(ExitCode::precondition, "shared-memory segment {} has {} bytes, expected {} for {} slots of {} bytes", name,
         static_cast<long long>(st.st_size), g.total, depth, slot_bytes);
  map_segment(seg_, fd.get(), g.total, name);

  char* base = static_cast<char*>(seg_.base);
  const auto* h = reinterpret_cast<const Header*>(base);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (h->magic != kMagic)
    fail(ExitCode::precondition, "shared-memory segment {} has no ccbench channel header (magic {:#x})", name,
         h->magic);
  if (h->slot_bytes != slot_bytes || h->depth != depth_ || h->stride != g.stride || h->slots_offset != g.slots_offset ||
      h->total_bytes != g.total)
    fail(ExitCode::precondition,
         "shared-memory channel {} has {} slots of {} bytes, this rank expects {} of {} "
         "(CCBENCH_CPU_SLOT_BYTES and CCBENCH_CPU_SLOT_DEPTH must be the same on every rank)",
         name, h->depth, h->slot_bytes, depth, slot_bytes);
  tail_ = reinterpret_cast<std::atomic<std::uint64_t>*>(base + kTailOffset);
  head_ = reinterpret_cast<std::atomic<std::uint64_t>*>(base + kHeadOffset);
  sizes_ = reinterpret_cast<std::uint64_t*>(base + kSizesOffset);
  slots_ = base + g.slots_offset;
  tail_local_ = tail_->load(std::memory_order_relaxed);
  head_cached_ = head_->load(std::memory_order_acquire);
}

void* ShmSendChannel::try_acquire() {
  if (tail_local_ - head_cached_ >= depth_) {
    head_cached_ = head_->load(std::memory_order_acquire);
    if (tail_local_ - head_cached_ >= depth_) return nullptr;
  }
  return slots_ + (tail_local_ % depth_) * stride_;
}

void ShmSendChannel::post(size_t bytes) {
  sizes_[tail_local_ % depth_] = bytes;
  tail_->store(++tail_local_, std::memory_order_release);
}

}  // namespace ccbench
