#pragma once
// Command lines for tests: ccbench's, from a list of arguments, and any CLI11 app's.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/app/cli.h"

namespace ccbench {

// parse_command_line of "ccbench" followed by `args`.
inline Command parse(std::vector<std::string> args) {
  args.insert(args.begin(), "ccbench");
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

// Parses `args` (without a program name) with `app`.
inline void parse_app(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes the list from the back
  app.parse(reversed);
}

}  // namespace ccbench
