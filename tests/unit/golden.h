#pragma once
// Golden files (tests/golden/): the writers' output compared byte for byte. A test never rewrites
// them: it leaves its actual output in CCBENCH_GOLDEN_ACTUAL_DIR (the build tree), and
// scripts/update-golden.sh copies those over tests/golden/ after a deliberate change, for review
// with git diff.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace ccbench::golden {

inline std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void expect_matches(const std::string& name, const std::string& actual) {
  std::filesystem::create_directories(CCBENCH_GOLDEN_ACTUAL_DIR);
  const std::string actual_path = std::string(CCBENCH_GOLDEN_ACTUAL_DIR) + "/" + name;
  std::ofstream(actual_path, std::ios::binary) << actual;
  const std::string path = std::string(CCBENCH_GOLDEN_DIR) + "/" + name;
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing; scripts/update-golden.sh writes it";
  EXPECT_EQ(actual, read(path)) << "output differs from " << path << " (this output: " << actual_path
                                << "; after a deliberate change, scripts/update-golden.sh copies it over)";
}

}  // namespace ccbench::golden
