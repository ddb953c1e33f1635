#pragma once
// Acceptance rules judged and reported: after a run (--accept, --min-busbw) and by `ccbench accept`.
#include <string>
#include <vector>

#include "core/exit_code.h"
#include "results/accept.h"

namespace ccbench {

// Prints the verdicts and, when `junit` is not "", writes them there as JUnit XML (test suite
// `suite`). ExitCode::threshold when a rule failed, else ok. Throws Error(usage) when the JUnit
// file cannot be written.
ExitCode report_acceptance(const std::vector<Rule>& rules, const std::vector<ResultSet>& runs, const std::string& junit,
                           const std::string& suite);

}  // namespace ccbench
