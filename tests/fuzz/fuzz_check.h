#pragma once
// What the fuzz targets share: a property check that stops the fuzzer with a message.
#include <cstdio>
#include <cstdlib>

#include "core/error.h"

namespace ccbench::fuzz {

// A property that must hold: otherwise print it and abort (libFuzzer saves the input).
inline void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz: property violated: %s\n", what);
  std::abort();
}

// Bad input must surface as Error(usage) with a message; anything else is a finding.
inline void require_usage(const Error& e) {
  require(e.code() == ExitCode::usage, "bad input raised an error other than a usage error (exit 2)");
  require(e.what()[0] != '\0', "a usage error without a message");
}

}  // namespace ccbench::fuzz
