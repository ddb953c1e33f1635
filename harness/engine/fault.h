#pragma once
// Fault injection for tests (CCBENCH_FAULT; documented as test-only). One fault per run:
//   CCBENCH_FAULT="KIND:rank=R[,size=S][,iteration=I][,impl=NAME][,ms=M][,index=X][,bytes=B]"
// KIND  stop     the rank stops itself (SIGSTOP) before the collective: a hang
//       kill     the rank kills itself (SIGKILL) before the collective
//       delay    the rank sleeps M ms before the collective
//       corrupt  after the collective, element X of the rank's output is flipped
//       corrupt_send  after the last collective of an out-of-place measurement, element X of
//                the rank's send buffer is flipped: a collective that wrote into its input
//       overrun  after the collective, B bytes past the end of the rank's output are written
//       alloc    the rank's buffer allocation fails (out of memory)
//       slow     the rank ends EVERY collective call (warm-up, batch, single iterations, each -m
//                aggregate once) of every measurement whose size is S and implementation NAME (any
//                if absent) M ms late: a rank whose part of each call finishes late (a slow GPU,
//                host or link). CPU ranks sleep; GPU ranks queue a kernel that keeps the stream
//                busy M ms (Backend::delay), so CUDA-graph replays hold the delay too. The tests
//                hold the timing to it: time_avg is M / agg_iters (fault_tests.py known_time).
// R is the rank in MPI_COMM_WORLD, also in sub-group runs (--groups).
// The other faults fire once, in the single-iteration pass at iteration I (default 0) of the
// first measurement whose size is S (any if absent) and implementation NAME (any if absent);
// corrupt_send at the end of that measurement, out of place (in place, the send buffer is the
// output).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ccbench {

struct FaultSpec {
  enum class Kind { stop, kill, delay, corrupt, corrupt_send, overrun, alloc, slow } kind = Kind::stop;
  int rank = 0;
  std::optional<std::uint64_t> size;  // requested bytes of the measurement
  int iteration = 0;
  std::string impl;  // empty: any
  int ms = 1000;
  std::uint64_t index = 0;
  std::uint64_t bytes = 1;
};

// Parses a CCBENCH_FAULT value; throws Error(usage) saying what is valid.
FaultSpec parse_fault(const std::string& text);
// The fault of this process from the environment (nullopt when CCBENCH_FAULT is unset).
std::optional<FaultSpec> fault_from_environment();

// Where the sweep injects it (harness/engine/runner.cpp decides when).
class Backend;
// Faults that act before the collective: a hang, a crash, a slow rank.
void inject_before(const FaultSpec& f);
// Why CCBENCH_FAULT's index=X cannot name an element of a buffer of `elements` here ("" when it
// can): a fault that does not do what it says is refused, never moved to another element.
std::string index_refusal(const FaultSpec& f, std::uint64_t elements, const std::string& buffer,
                          const std::string& where);
// Faults that damage data after the collective: one wrong element, or bytes past the end.
void inject_after(const FaultSpec& f, Backend& b, std::byte* out, size_t elements, size_t esz, std::byte* used_end);

}  // namespace ccbench
