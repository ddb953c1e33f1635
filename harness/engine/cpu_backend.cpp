#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <thread>

#include <fmt/format.h>

#include "collectives/verifiable.h"
#include "harness/engine/backend.h"
#include "core/error.h"

namespace ccbench {

namespace {

class CpuBackend final : public Backend {
 public:
  Device device() const override { return Device::cpu; }

  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0)
      fail(ExitCode::precondition, "out of host memory allocating {} bytes", bytes);
    return p;
  }
  void release(void* p) override { std::free(p); }

  void fill_input(const PatternSpec& s, void* dst, std::size_t n, std::uint64_t base) override {
    dispatch_type(s.dtype, [&](auto t) {
      using T = decltype(t);
      T* d = static_cast<T*>(dst);
      for (std::size_t i = 0; i < n; ++i)
        d[i] = collective_input<T>(s.coll, s.op, s.seed, s.rank, base + i, s.nranks, s.pattern);
    });
  }

  void fill_expected(const PatternSpec& s, void* dst, std::size_t n) override {
    dispatch_type(s.dtype, [&](auto t) {
      using T = decltype(t);
      T* d = static_cast<T*>(dst);
      for (std::size_t j = 0; j < n; ++j)
        d[j] = collective_expected<T>(s.coll, s.op, s.seed, s.rank, s.nranks, s.root, s.count, j, s.pattern);
    });
  }

  void fill_bytes(void* dst, std::size_t bytes, std::uint8_t value) override { std::memset(dst, value, bytes); }
  void copy(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  // Eight bytes a step (buffers of any alignment: memcpy in and out): the byte loop took 10 % of a
  // 5 MiB run's time in the sanitizer build (-O1, a check per byte), where nothing vectorises it.
  void complement(void* dst, const void* src, std::size_t bytes) override {
    auto* d = static_cast<std::uint8_t*>(dst);
    const auto* s = static_cast<const std::uint8_t*>(src);
    std::size_t i = 0;
    for (; i + sizeof(std::uint64_t) <= bytes; i += sizeof(std::uint64_t)) {
      std::uint64_t w;
      std::memcpy(&w, s + i, sizeof w);
      w = ~w;
      std::memcpy(d + i, &w, sizeof w);
    }
    for (; i < bytes; ++i) d[i] = static_cast<std::uint8_t>(~s[i]);
  }

  std::uint64_t count_bytes_not(const void* p, std::size_t bytes, std::uint8_t value) override {
    const auto* b = static_cast<const std::uint8_t*>(p);
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < bytes; ++i) n += b[i] != value;
    return n;
  }

  Mismatches compare(const PatternSpec& s, const void* expected, const void* actual, std::size_t n) override {
    return dispatch_type(s.dtype, [&](auto t) {
      using T = decltype(t);
      const T* e = static_cast<const T*>(expected);
      const T* a = static_cast<const T*>(actual);
      const ReduceOp op = has_reduce_op(s.coll) ? s.op : ReduceOp::none;  // data movement: bit for bit
      Mismatches m;
      for (std::size_t i = 0; i < n; ++i) {
        if (value_matches<T>(op, e[i], a[i], s.nranks)) continue;
        if (m.wrong++ == 0) {
          m.first_index = i;
          m.expected = format_element(e[i]);
          m.actual = format_element(a[i]);
        }
      }
      return m;
    });
  }

  Mismatches check_input(const PatternSpec& s, const void* buf, std::size_t n, std::uint64_t base) override {
    return dispatch_type(s.dtype, [&](auto t) {
      using T = decltype(t);
      const T* a = static_cast<const T*>(buf);
      Mismatches m;
      for (std::size_t i = 0; i < n; ++i) {
        T e = collective_input<T>(s.coll, s.op, s.seed, s.rank, base + i, s.nranks, s.pattern);
        if (std::memcmp(&e, &a[i], sizeof(T)) == 0) continue;
        if (m.wrong++ == 0) {
          m.first_index = i;
          m.expected = format_element(e);
          m.actual = format_element(a[i]);
        }
      }
      return m;
    });
  }

  void synchronize() override {}
  void delay(int ms) override { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
  void mark(int i) override { marks_[i] = std::chrono::steady_clock::now(); }
  double elapsed_us(int a, int b) override {
    return std::chrono::duration<double, std::micro>(marks_[b] - marks_[a]).count();
  }
  void begin_capture() override { no_graphs(); }
  void end_capture() override { no_graphs(); }
  void replay() override { no_graphs(); }
  void drop_capture() override {}
  std::string description() const override { return "host memory"; }
  std::uint64_t available_memory() const override {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    while (meminfo >> key >> kib) {
      if (key == "MemAvailable:") return kib * 1024;
      meminfo.ignore(256, '\n');
    }
    return 0;  // unknown
  }

 private:
  [[noreturn]] static void no_graphs() { fail(ExitCode::precondition, "CUDA graphs need GPU ranks"); }
  std::chrono::steady_clock::time_point marks_[kMaxMarks];
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace ccbench
