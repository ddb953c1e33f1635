#pragma once
// The message of the usage error (exit code 2) a call must throw, for tests of input checks.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace ccbench {

// The message of the usage error `f` must throw; fails the test if it throws nothing else.
template <typename F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return {};
}

}  // namespace ccbench
