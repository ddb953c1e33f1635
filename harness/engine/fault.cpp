#include "harness/engine/fault.h"

#include <charconv>
#include <csignal>
#include <thread>
#include <set>
#include <sstream>

#include "harness/engine/backend.h"
#include "harness/engine/sizes.h"
#include "core/error.h"
#include "core/knobs.h"

namespace ccbench {

namespace {

constexpr const char* kFaultHelp =
    "expected KIND:rank=R[,size=S][,iteration=I][,impl=NAME][,ms=M][,index=X][,bytes=B] with KIND one of "
    "stop, kill, delay, corrupt, corrupt_send, overrun, alloc, slow";

template <typename T>
T number(const std::string& key, const std::string& v) {
  T x{};
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty() || v.front() == '-')
    fail(ExitCode::usage, "CCBENCH_FAULT: {}='{}' is not a non-negative whole number", key, v);
  return x;
}

}  // namespace

FaultSpec parse_fault(const std::string& text) {
  FaultSpec f;
  auto colon = text.find(':');
  if (colon == std::string::npos) fail(ExitCode::usage, "CCBENCH_FAULT='{}' is not valid: {}", text, kFaultHelp);
  std::string kind = text.substr(0, colon);
  if (kind == "stop") f.kind = FaultSpec::Kind::stop;
  else if (kind == "kill") f.kind = FaultSpec::Kind::kill;
  else if (kind == "delay") f.kind = FaultSpec::Kind::delay;
  else if (kind == "corrupt") f.kind = FaultSpec::Kind::corrupt;
  else if (kind == "corrupt_send") f.kind = FaultSpec::Kind::corrupt_send;
  else if (kind == "overrun") f.kind = FaultSpec::Kind::overrun;
  else if (kind == "alloc") f.kind = FaultSpec::Kind::alloc;
  else if (kind == "slow") f.kind = FaultSpec::Kind::slow;
  else fail(ExitCode::usage, "CCBENCH_FAULT: unknown kind '{}': {}", kind, kFaultHelp);
  bool have_rank = false;
  std::istringstream in(text.substr(colon + 1));
  std::string item;
  std::set<std::string> given;
  while (std::getline(in, item, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos) fail(ExitCode::usage, "CCBENCH_FAULT: '{}' is not key=value: {}", item, kFaultHelp);
    std::string key = item.substr(0, eq), v = item.substr(eq + 1);
    if (!given.insert(key).second)  // one fault per run: a second value would silently win
      fail(ExitCode::usage, "CCBENCH_FAULT='{}': {} is given twice; give each key once (one fault per run)", text, key);
    if (key == "rank") {
      f.rank = number<int>(key, v);
      have_rank = true;
    } else if (key == "size") {
      f.size = parse_size(v, "CCBENCH_FAULT size");
    } else if (key == "iteration") {
      f.iteration = number<int>(key, v);
    } else if (key == "impl") {
      if (v.empty()) fail(ExitCode::usage, "CCBENCH_FAULT: impl= needs a name");
      f.impl = v;
    } else if (key == "ms") {
      f.ms = number<int>(key, v);
    } else if (key == "index") {
      f.index = number<std::uint64_t>(key, v);
    } else if (key == "bytes") {
      f.bytes = number<std::uint64_t>(key, v);
      if (f.bytes == 0 || f.bytes > 4096) fail(ExitCode::usage, "CCBENCH_FAULT: bytes must be from 1 to 4096");
    } else {
      fail(ExitCode::usage, "CCBENCH_FAULT: unknown key '{}': {}", key, kFaultHelp);
    }
  }
  if (!have_rank) fail(ExitCode::usage, "CCBENCH_FAULT='{}' names no rank: {}", text, kFaultHelp);
  return f;
}

std::optional<FaultSpec> fault_from_environment() {
  const auto text = env_text(Knob::fault);
  if (!text) return std::nullopt;
  return parse_fault(*text);
}

void inject_before(const FaultSpec& f) {
  switch (f.kind) {
    case FaultSpec::Kind::stop: std::raise(SIGSTOP); break;
    case FaultSpec::Kind::kill: std::raise(SIGKILL); break;
    case FaultSpec::Kind::delay: std::this_thread::sleep_for(std::chrono::milliseconds(f.ms)); break;
    default: break;
  }
}

std::string index_refusal(const FaultSpec& f, std::uint64_t elements, const std::string& buffer,
                          const std::string& where) {
  if (f.index < elements) return "";
  return fmt::format(
      "CCBENCH_FAULT index={} names no element of {} in {}: it holds {} element{}{}; give an index "
      "the buffer holds",
      f.index, buffer, where, elements, elements == 1 ? "" : "s",
      elements ? fmt::format(" (valid: 0 to {})", elements - 1) : "");
}

void inject_after(const FaultSpec& f, Backend& b, std::byte* out, size_t elements, size_t esz, std::byte* used_end) {
  if (f.kind == FaultSpec::Kind::corrupt && f.index < elements) {
    std::byte* e = out + f.index * esz;
    b.complement(e, e, esz);
  } else if (f.kind == FaultSpec::Kind::overrun) {
    b.fill_bytes(used_end, f.bytes, 0x5A);
  }
  b.synchronize();
}

}  // namespace ccbench
