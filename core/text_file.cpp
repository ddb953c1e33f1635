#include "core/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace ccbench {

std::string read_text_file(const std::string& path, ExitCode code) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(code, "cannot read {}: {}", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail(code, "cannot read {}: {}", path, std::strerror(errno));
  return text.str();
}

void write_text_file(const std::string& path, const std::string& text, ExitCode code) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) fail(code, "cannot write {}: {}", path, std::strerror(errno));
}

}  // namespace ccbench
