#include "harness/verdict/acceptance.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "core/error.h"

namespace ccbench {

ExitCode report_acceptance(const std::vector<Rule>& rules, const std::vector<ResultSet>& runs, const std::string& junit,
                           const std::string& suite) {
  const AcceptReport rep = evaluate_rules(rules, runs);
  fmt::print("{}", rep.text());
  if (!junit.empty()) {
    std::ofstream out(junit);
    out << rep.junit_xml(suite);
    if (!out.flush()) fail(ExitCode::usage, "--junit: cannot write {}: {}", junit, std::strerror(errno));
    fmt::print("# JUnit: {}\n", junit);
  }
  return rep.passed ? ExitCode::ok : ExitCode::threshold;
}

}  // namespace ccbench
