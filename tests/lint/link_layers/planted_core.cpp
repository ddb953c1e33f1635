// Planted by lint.link_layers_self_test: a file in the role of core/ that calls up into the
// harness engine (harness/engine/overlap_spec.h). Declared here rather than included, as an upward call that
// the include lint (tests/lint/layers.py) would not see; the linker must still refuse it.
#include <string>

namespace ccbench {
std::string overlap_valid();  // harness/engine/overlap_spec.h
std::string planted_upward_call() { return overlap_valid(); }
}  // namespace ccbench
