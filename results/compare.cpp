#include "results/compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/size.h"
#include "results/format.h"
#include "results/row_key.h"

namespace ccbench {

namespace {

// Root and group are named only where they are not the default.
std::string root_and_group(const RunRecord& r) {
  std::string s;
  if (r.root >= 0) s += fmt::format("  root {}", r.root);
  if (r.group != "world") s += fmt::format("  group {}", r.group);
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
    RowKey key;
    const RunRecord* first;
    std::vector<const RunRecord*> recs;
  };
  std::vector<Block> blocks;
  for (const RunRecord& r : rows) {
    const RowKey key = side_by_side_key(r);
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
    out += aligned_columns(header, data, "# ", false);  // all comment lines: it follows the table
  }
  if (out.empty()) return out;
  std::string head = fmt::format("# Bus bandwidth by implementation, GB/s ({})",
                                 use_median ? "median iteration" : "batch average, as the table and nccl-tests");
  if (any_ratio) head += fmt::format("; (x) = ratio to {} at the same size", baseline);
  if (!use_median)
    head += fmt::format("; p50 = busbw of the median single call, where it differs by more than {:g}%",
                        kMedianNoteFraction * 100);
  return head + "\n" + out;
}

}  // namespace ccbench
