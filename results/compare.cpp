#include "results/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "results/error.h"
#include "results/format.h"

namespace ccbench {

namespace {

std::string placement(const RunRecord& r) { return r.in_place ? "in-place" : "out-of-place"; }

// Root and group are named only where they are not the default.
std::string root_and_group(const RunRecord& r) {
  std::string s;
  if (r.root >= 0) s += fmt::format("  root {}", r.root);
  if (r.group != "world") s += fmt::format("  group {}", r.group);
  return s;
}

// Right-aligned columns; header rows start with "# ", data rows with `data_prefix` (as wide),
// so that the columns line up under their names. With `left_last` the last column (free text)
// is left-aligned.
std::string layout(const std::vector<std::vector<std::string>>& header,
                   const std::vector<std::vector<std::string>>& data, const char* data_prefix, bool left_last) {
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

bool is_ok(const RunRecord& r) { return r.status == RowStatus::ok; }

// Beside the batch figure, the median iteration's is shown where the two differ by more than
// this fraction: small sizes, where the batch hides per-call latency, and noisy runs.
constexpr double kMedianNoteFraction = 0.10;

bool median_differs(const RunRecord& r) {
  return std::abs(r.busbw_median_gbps - r.busbw_gbps) > kMedianNoteFraction * std::max(r.busbw_gbps, 1e-12) &&
         fmt::format("{:.2f}", r.busbw_median_gbps) != fmt::format("{:.2f}", r.busbw_gbps);
}

}  // namespace

std::string comparison_table(const std::vector<RunRecord>& rows, const std::string& baseline, bool use_median) {
  struct Block {
    std::string key;
    const RunRecord* first;
    std::vector<const RunRecord*> recs;
  };
  std::vector<Block> blocks;
  for (const RunRecord& r : rows) {
    const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", r.collective,
                                        r.dtype, r.op, r.mode, r.in_place, r.ranks, r.ranks_per_node, r.device,
                                        r.root, r.group);
    auto it = std::find_if(blocks.begin(), blocks.end(), [&](const Block& b) { return b.key == key; });
    if (it == blocks.end()) it = blocks.insert(blocks.end(), Block{key, &r, {}});
    it->recs.push_back(&r);
  }

  auto value = [&](const RunRecord& r) { return use_median ? r.busbw_median_gbps : r.busbw_gbps; };
  std::string out;
  bool any_ratio = false;
  for (const Block& b : blocks) {
    // Columns: implementations in order of first appearance; one implementation over several
    // transports gets a column per transport.
    std::vector<std::pair<std::string, std::string>> cols;
    for (const RunRecord* r : b.recs)
      if (std::find(cols.begin(), cols.end(), std::pair{r->impl, r->transport}) == cols.end())
        cols.emplace_back(r->impl, r->transport);
    if (cols.size() < 2) continue;
    std::vector<std::string> labels;
    for (const auto& col : cols) {
      const auto n = std::count_if(cols.begin(), cols.end(), [&](const auto& c) { return c.first == col.first; });
      labels.push_back(n > 1 ? col.first + "/" + col.second : col.first);
    }
    const auto base_it = std::find_if(cols.begin(), cols.end(), [&](const auto& c) { return c.first == baseline; });
    const long base = base_it == cols.end() ? -1 : base_it - cols.begin();
    any_ratio |= base >= 0;

    std::map<std::uint64_t, std::vector<const RunRecord*>> by_size;  // ascending sizes
    for (const RunRecord* r : b.recs) {
      auto& cells = by_size[r->bytes];
      cells.resize(cols.size(), nullptr);
      const size_t c = std::find(cols.begin(), cols.end(), std::pair{r->impl, r->transport}) - cols.begin();
      if (!cells[c]) cells[c] = r;  // a repeated measurement: the first one counts
    }

    std::vector<std::vector<std::string>> header{{"size"}}, data;
    header[0].insert(header[0].end(), labels.begin(), labels.end());
    for (const auto& [bytes, cells] : by_size) {
      std::vector<std::string> row{human_size(bytes)};
      const RunRecord* ref = base >= 0 ? cells[base] : nullptr;
      for (size_t c = 0; c < cells.size(); ++c) {
        const RunRecord* r = cells[c];
        if (!r) {
          row.push_back("-");
        } else if (!is_ok(*r)) {
          row.push_back(std::string(row_status_name(r->status)));
        } else {
          std::string text = fmt::format("{:.2f}", value(*r));
          if (static_cast<long>(c) != base && ref && is_ok(*ref) && value(*ref) > 0)
            text += fmt::format(" ({:.2f}x)", value(*r) / value(*ref));
          if (!use_median && median_differs(*r)) text += fmt::format(" p50 {:.2f}", r->busbw_median_gbps);
          row.push_back(std::move(text));
        }
      }
      data.push_back(std::move(row));
    }

    const RunRecord& f = *b.first;
    std::string ranks = fmt::format("ranks {}", f.ranks);
    if (f.ranks_per_node > 0) ranks += fmt::format(" ({} per node)", f.ranks_per_node);
    out += "#\n";
    out += fmt::format("# {}  dtype {}  op {}  mode {}  {}  {}  device {}{}\n", f.collective, f.dtype, f.op, f.mode,
                       placement(f), ranks, f.device, root_and_group(f));
    out += layout(header, data, "# ", false);  // all comment lines: it follows the table
  }
  if (out.empty()) return out;
  std::string head = fmt::format("# Bus bandwidth by implementation, GB/s ({})",
                                 use_median ? "median iteration" : "batch average, as the table and nccl-tests");
  if (any_ratio) head += fmt::format("; (x) = ratio to {} at the same size", baseline);
  if (!use_median)
    head += fmt::format("; p50 = busbw of the median single call, where it differs by more than {:g}%", kMedianNoteFraction * 100);
  return head + "\n" + out;
}

CompareResult compare_runs(const std::vector<RunRecord>& before, const std::vector<RunRecord>& after,
                           double tolerance) {
  if (!(tolerance >= 0 && tolerance < 1))
    fail(ExitCode::usage, "tolerance must be a fraction in [0, 1), for example 0.05 for 5%; got {}", tolerance);

  // Everything that names a case except the size; then the size.
  auto case_of = [](const RunRecord& r) {
    return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", r.collective, r.impl,
                       r.transport, r.device, r.dtype, r.op, r.root, r.in_place, r.mode, r.ranks, r.group);
  };
  auto title_of = [](const RunRecord& r) {
    return fmt::format("{}  impl {}  transport {}  device {}  ranks {}  dtype {}  op {}  mode {}  {}{}",
                       r.collective, r.impl, r.transport, r.device, r.ranks, r.dtype, r.op, r.mode, placement(r),
                       root_and_group(r));
  };

  std::map<std::string, std::vector<size_t>> unmatched_after;  // row key -> indices, in file order
  for (size_t i = 0; i < after.size(); ++i)
    unmatched_after[fmt::format("{}\x1f{}", case_of(after[i]), after[i].bytes)].push_back(i);

  struct Block {
    std::string key, title;
    std::vector<std::vector<std::string>> data;
  };
  std::vector<Block> blocks;
  std::vector<const RunRecord*> only_before;
  std::set<size_t> matched_after;
  CompareResult res;
  int matched = 0;

  for (const RunRecord& b : before) {
    auto it = unmatched_after.find(fmt::format("{}\x1f{}", case_of(b), b.bytes));
    if (it == unmatched_after.end() || it->second.empty()) {
      only_before.push_back(&b);
      continue;
    }
    const size_t ai = it->second.front();
    it->second.erase(it->second.begin());
    matched_after.insert(ai);
    const RunRecord& a = after[ai];
    ++matched;

    auto cell = [](const RunRecord& r) {
      return is_ok(r) ? fmt::format("{:.2f}", r.busbw_median_gbps) : std::string(row_status_name(r.status));
    };
    std::string ratio = "-", flag;
    if (is_ok(b) && is_ok(a)) {
      if (b.busbw_median_gbps > 0) ratio = fmt::format("{:.2f}x", a.busbw_median_gbps / b.busbw_median_gbps);
      if (a.busbw_median_gbps < b.busbw_median_gbps * (1 - tolerance)) flag = "REGRESSION";
    } else if (is_ok(b) && (a.status == RowStatus::wrong || a.status == RowStatus::failed)) {
      flag = fmt::format("REGRESSION (now {})", row_status_name(a.status));
    } else if (is_ok(b)) {
      flag = fmt::format("now {}", row_status_name(a.status));
    } else if (is_ok(a)) {
      flag = "now ok";
    }
    if (flag.starts_with("REGRESSION")) ++res.regressions;

    const std::string key = case_of(b);
    auto bl = std::find_if(blocks.begin(), blocks.end(), [&](const Block& x) { return x.key == key; });
    if (bl == blocks.end()) bl = blocks.insert(blocks.end(), Block{key, title_of(b), {}});
    bl->data.push_back({human_size(b.bytes), cell(b), cell(a), ratio, flag});
  }

  std::string& s = res.text;
  s += fmt::format(
      "# ccbench compare: busbw of the median iteration in GB/s, before -> after. REGRESSION: more than {:g}% "
      "lower, or wrong or failed after\n",
      tolerance * 100);
  for (const Block& bl : blocks) {
    s += "#\n# " + bl.title + "\n";
    s += layout({{"size", "before", "after", "ratio", ""}}, bl.data, "  ", true);
  }
  auto list = [&](const char* which, const std::vector<const RunRecord*>& rs) {
    if (rs.empty()) return;
    s += fmt::format("#\n# only in {}: {} row{}\n", which, rs.size(), rs.size() == 1 ? "" : "s");
    for (const RunRecord* r : rs) s += fmt::format("#   {}  {}\n", title_of(*r), human_size(r->bytes));
  };
  list("before", only_before);
  std::vector<const RunRecord*> only_after;
  for (size_t i = 0; i < after.size(); ++i)
    if (!matched_after.count(i)) only_after.push_back(&after[i]);
  list("after", only_after);
  s += fmt::format("#\n# {} regression{} in {} matched row{} (tolerance {:g}%)\n", res.regressions,
                   res.regressions == 1 ? "" : "s", matched, matched == 1 ? "" : "s", tolerance * 100);
  return res;
}

}  // namespace ccbench
