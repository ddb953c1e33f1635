#include "harness/engine/overlap_spec.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/size.h"

namespace ccbench {

namespace {

constexpr std::uint64_t kMinGemmN = 256, kMaxGemmN = 65536, kGemmMultiple = 64;
constexpr std::uint64_t kMinMembw = 1ull << 20, kMaxMembw = 64ull << 30, kMembwMultiple = 16;

// The SIZE of --overlap KIND:SIZE, from lo to hi and a multiple of `multiple`; else Error(usage)
// saying so in `what` words.
std::uint64_t load_size(const std::string& text, const std::string& size, std::uint64_t lo, std::uint64_t hi,
                        std::uint64_t multiple, const std::string& what) {
  std::uint64_t v = 0;
  try {
    v = parse_size(size, "--overlap " + text);
  } catch (const Error&) {
    v = 0;  // refused below, with what is valid
  }
  if (v < lo || v > hi || v % multiple) fail(ExitCode::usage, "--overlap {}: {}", text, what);
  return v;
}

}  // namespace

std::string overlap_valid() {
  return fmt::format(
      "gemm[:N] (N from {} to {}, a multiple of {}; default {}), membw[:SIZE] (from {} to {}, a "
      "multiple of {}; default {}), none",
      kMinGemmN, kMaxGemmN, kGemmMultiple, kDefaultGemmN, format_size(kMinMembw), format_size(kMaxMembw),
      kMembwMultiple, format_size(kDefaultMembwBytes));
}

OverlapSpec parse_overlap(const std::string& text) {
  if (text.empty() || text == "none") return {};
  const std::size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon), size = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (kind == "gemm")
    return {LoadKind::gemm,
            size.empty() ? kDefaultGemmN
                         : load_size(text, size, kMinGemmN, kMaxGemmN, kGemmMultiple,
                                     fmt::format("N must be a whole number from {} to {}, a multiple of {} (m = n = k "
                                                 "= N)",
                                                 kMinGemmN, kMaxGemmN, kGemmMultiple)),
            kDefaultRoomSms};
  if (kind == "membw")
    return {LoadKind::membw,
            size.empty() ? kDefaultMembwBytes
                         : load_size(text, size, kMinMembw, kMaxMembw, kMembwMultiple,
                                     fmt::format("SIZE must be bytes from {} to {}, a multiple of {} (K/M/G = powers "
                                                 "of 1024)",
                                                 format_size(kMinMembw), format_size(kMaxMembw), kMembwMultiple)),
            kDefaultRoomSms};
  fail(ExitCode::usage, "--overlap: unknown load '{}' (valid: {})", text, overlap_valid());
}

std::string load_label(const OverlapSpec& s) {
  std::string label;
  switch (s.kind) {
    case LoadKind::gemm: label = fmt::format("gemm bf16 {}x{}x{}", s.size, s.size, s.size); break;
    case LoadKind::membw: label = fmt::format("membw {}", format_size(s.size)); break;
    case LoadKind::none: return "";
  }
  if (s.room_sms > 0) label += fmt::format(", {} SMs left", s.room_sms);
  return label;
}

const char* load_unit(const OverlapSpec& s) { return s.kind == LoadKind::gemm ? "TFLOPS" : "GB/s"; }

double load_work(const OverlapSpec& s) {
  const double n = static_cast<double>(s.size);
  return s.kind == LoadKind::gemm ? 2.0 * n * n * n / 1e12 : 2.0 * n / 1e9;
}

}  // namespace ccbench
