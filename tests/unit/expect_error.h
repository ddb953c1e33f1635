#pragma once
// The Error a call must throw, for tests of failure paths: its exit code and words of its message.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "core/error.h"

namespace ccbench {

// Runs `f`, expecting Error with `code` whose message contains every one of `parts`.
template <typename F>
void expect_error(F&& f, ExitCode code, std::initializer_list<const char*> parts) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " / " << p;
    return;
  }
  ADD_FAILURE() << "no error thrown";
}

}  // namespace ccbench
