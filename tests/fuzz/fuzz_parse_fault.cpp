// libFuzzer target: the CCBENCH_FAULT parser (harness/engine/fault.h). Properties: bad text is
// Error(usage); an accepted spec has no negative rank, iteration or delay, and 1..4096 bytes.
#include <cstdint>
#include <string>

#include "harness/engine/fault.h"
#include "tests/fuzz/fuzz_check.h"

using namespace ccbench;
using fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    FaultSpec f = parse_fault(text);
    require(f.rank >= 0 && f.iteration >= 0 && f.ms >= 0, "a negative rank, iteration or delay was accepted");
    require(f.bytes >= 1 && f.bytes <= 4096, "overrun bytes outside 1..4096 were accepted");
  } catch (const Error& e) {
    fuzz::require_usage(e);
  }
  return 0;
}
