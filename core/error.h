#pragma once
// The one exception type of ccbench. It carries the exit code the failure maps to and a
// breadcrumb: the message is written once where the error starts; callers that rethrow add
// context with Error::with_context ("while running allreduce/ring at 1 MiB").
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/exit_code.h"

namespace ccbench {

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }
  // A copy of this error with "context: " put in front of the message.
  Error with_context(const std::string& context) const {
    Error e(code_, context + ": " + what());
    e.agreed_ = agreed_;
    return e;
  }
  // An error every rank of the job throws with the same message (an agreement over the ranks
  // found it): one rank prints it, not all.
  static Error agreed(ExitCode code, const std::string& message) {
    Error e(code, message);
    e.agreed_ = true;
    return e;
  }
  bool is_agreed() const { return agreed_; }

 private:
  ExitCode code_;
  bool agreed_ = false;
};

template <typename... Args>
[[noreturn]] void fail(ExitCode code, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(code, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace ccbench
