#include "results/format.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/size.h"

namespace ccbench {

std::string single_line(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (c == '\r' || c == '\n' || c == '\t') c = ' ';
  return out;
}

namespace {
bool has_control(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}
}  // namespace

std::string shell_quoted(const std::string& a) {
  if (!a.empty() && a.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,+@%-") ==
                        std::string::npos)
    return a;
  if (has_control(a)) {
    std::string q = "$'";
    for (char c : a) {
      if (c == '\n') q += "\\n";
      else if (c == '\t') q += "\\t";
      else if (c == '\r') q += "\\r";
      else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        q += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      else if (c == '\'' || c == '\\') q += std::string("\\") + c;
      else q += c;
    }
    return q + "'";
  }
  std::string q = "'";
  for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string path_on_one_line(const std::string& path) { return has_control(path) ? shell_quoted(path) : path; }

std::string wrong_text(const RunRecord& r) { return r.wrong ? std::to_string(*r.wrong) : "N/A"; }

namespace {
// "4 (2 per node)", or "4" where the layout is unknown; `noun` goes after the count.
std::string ranks_text(const RunRecord& r, const char* noun = "") {
  std::string ranks = fmt::format("{}{}", r.ranks, noun);
  if (r.ranks_per_node > 0) ranks += fmt::format(" ({} per node)", r.ranks_per_node);
  return ranks;
}
}  // namespace

std::string case_label(const RunRecord& r) {
  std::string t = fmt::format("{}/{} over {}, {}, {} {}, {}, {}", r.collective, r.impl, r.transport, r.device, r.dtype,
                              r.op, r.mode, ranks_text(r, " ranks"));
  if (r.root >= 0) t += fmt::format(", root {}", r.root);
  if (r.group != "world") t += fmt::format(", group {}", r.group);
  if (!r.nccl_config.empty()) t += fmt::format(", NCCL {}", r.nccl_config);
  if (!r.load.empty()) t += fmt::format(", beside {}", r.load);
  return t;
}

std::string case_title(const RunRecord& r) {
  const std::string ranks = ranks_text(r);
  std::string t = fmt::format("{}  impl {}  transport {}  device {}  ranks {}  dtype {}  op {}  mode {}", r.collective,
                              r.impl, r.transport, r.device, ranks, r.dtype, r.op, r.mode);
  if (r.root >= 0) t += fmt::format("  root {}", r.root);
  if (r.group != "world") t += fmt::format("  group {}", r.group);
  if (!r.nccl_config.empty()) t += fmt::format("  nccl_config {}", r.nccl_config);
  if (!r.load.empty()) t += fmt::format("  load {}", r.load);
  return t;
}

std::string placement(const RunRecord& r) { return r.in_place ? "in-place" : "out-of-place"; }

std::string row_title(const RunRecord& r) { return fmt::format("{}  {}", case_title(r), placement(r)); }

std::string row_label(const RunRecord& r, bool name_cycle) {
  std::string l = fmt::format("{}  size {}", row_title(r), human_size(r.bytes));
  if (name_cycle) l += fmt::format("  cycle {}", r.cycle);
  return l;
}

std::string case_words(const std::string& collective, const std::string& impl, const std::string& dtype,
                       const std::string& op) {
  std::string n = fmt::format("{}/{} {}", collective, impl, dtype);
  if (op != "none") n += " " + op;
  return n;
}

std::string row_words(const RunRecord& r, bool with_group) {
  std::string n = case_words(r.collective, r.impl, r.dtype, r.op);
  n += fmt::format(" {} {}", format_size(r.bytes), placement(r));
  if (r.mode != "eager") n += " " + r.mode;
  if (with_group && r.group != "world") n += " group " + r.group;
  return n;
}

std::string aligned_columns(const std::vector<std::vector<std::string>>& header,
                            const std::vector<std::vector<std::string>>& data, const char* data_prefix,
                            bool left_last) {
  std::vector<size_t> width;
  for (const auto* part : {&header, &data})
    for (const auto& row : *part)
      for (size_t i = 0; i < row.size(); ++i) {
        if (width.size() <= i) width.push_back(0);
        width[i] = std::max(width[i], row[i].size());
      }
  std::string s;
  auto emit = [&](const std::vector<std::string>& row, const char* prefix) {
    std::string l = prefix;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) l += "  ";
      l += left_last && i + 1 == width.size() ? row[i] : fmt::format("{:>{}}", row[i], width[i]);
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    s += l + "\n";
  };
  for (const auto& row : header) emit(row, "# ");
  for (const auto& row : data) emit(row, data_prefix);
  return s;
}

}  // namespace ccbench
