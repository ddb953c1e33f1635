#pragma once
// Whole text files in and out, with the operating system's reason in every error.
#include <string>

#include "core/exit_code.h"

namespace ccbench {

// The file's bytes. Throws Error(code) "cannot read PATH: REASON".
std::string read_text_file(const std::string& path, ExitCode code = ExitCode::usage);

// Replaces the file's content with `text`. Throws Error(code) "cannot write PATH: REASON".
void write_text_file(const std::string& path, const std::string& text, ExitCode code = ExitCode::runtime);

}  // namespace ccbench
