#include "topologies/ring_order.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace ccbench {

namespace {

// Whether `value` is meant as an inline list rather than a file name: it has a comma, or only
// digits, signs and blanks.
bool looks_inline(const std::string& value) {
  return value.find(',') != std::string::npos || value.find_first_not_of("0123456789-+ \t") == std::string::npos;
}

// Ranks separated by commas or white space; '#' comments to the end of a line. `where` names the
// source in messages ("--ring-order 0,2,1,3", "--ring-order order.txt line 3").
std::vector<int> parse_ranks(const std::string& text, const std::string& source, bool numbered_lines) {
  std::vector<int> ranks;
  std::istringstream lines(text);
  std::string line;
  for (int line_no = 1; std::getline(lines, line); ++line_no) {
    line = line.substr(0, line.find('#'));
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      int r = -1;
      const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), r);
      if (ec != std::errc() || end != w.data() + w.size() || r < 0)
        fail(ExitCode::usage,
             "--ring-order {}{}: '{}' is not a rank; expected whole numbers from 0, separated by "
             "commas or blanks",
             source, numbered_lines ? fmt::format(" line {}", line_no) : "", w);
      ranks.push_back(r);
    }
  }
  if (ranks.empty())
    fail(ExitCode::usage,
         "--ring-order {}: no ranks given; expected rank, topo, a list such as 0,2,1,3, or a file "
         "holding one",
         source);
  return ranks;
}

std::vector<int> read_ranks_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    fail(ExitCode::usage,
         "--ring-order {}: not rank, topo or a list of ranks such as 0,2,1,3, and no readable file "
         "of that name",
         path);
  std::stringstream text;
  text << in.rdbuf();
  return parse_ranks(text.str(), path, true);
}

}  // namespace

std::string RingOrderChoice::kind_name() const {
  switch (kind) {
    case RingOrderKind::rank: return "rank";
    case RingOrderKind::topo: return "topo";
    case RingOrderKind::list: return "list";
  }
  return "?";
}

RingOrderChoice parse_ring_order(const std::string& value) {
  RingOrderChoice c;
  c.text = value;
  if (value == "rank") return c;
  if (value == "topo") {
    c.kind = RingOrderKind::topo;
    return c;
  }
  c.kind = RingOrderKind::list;
  c.list = looks_inline(value) ? parse_ranks(value, value, false) : read_ranks_file(value);
  return c;
}

void validate_ring_order(const std::vector<int>& order, int nranks, const std::string& what) {
  std::vector<int> seen(static_cast<size_t>(nranks), 0);
  std::vector<int> outside;
  for (int r : order) {
    if (r < 0 || r >= nranks) outside.push_back(r);
    else ++seen[static_cast<size_t>(r)];
  }
  std::vector<int> missing, repeated;
  for (int r = 0; r < nranks; ++r) {
    if (seen[static_cast<size_t>(r)] == 0) missing.push_back(r);
    if (seen[static_cast<size_t>(r)] > 1) repeated.push_back(r);
  }
  if (outside.empty() && missing.empty() && repeated.empty()) return;
  std::vector<std::string> wrong;
  if (!outside.empty()) wrong.push_back(fmt::format("no such rank {}", fmt::join(outside, ", ")));
  if (!repeated.empty()) wrong.push_back(fmt::format("repeated {}", fmt::join(repeated, ", ")));
  if (!missing.empty()) wrong.push_back(fmt::format("missing {}", fmt::join(missing, ", ")));
  fail(ExitCode::usage,
       "{}: {} rank(s) given for a run of {}: {}; a ring order lists every rank from 0 to {} "
       "exactly once",
       what, order.size(), nranks, fmt::join(wrong, "; "), nranks - 1);
}

namespace {

using PairLinks = std::vector<std::vector<int>>;

// Whether the links of every pair of `members` are known and not all the same: only then do
// NVLink neighbours say more than the NUMA order.
bool links_order_node(const PairLinks& links, const std::vector<int>& members) {
  std::set<int> counts;
  for (int a : members)
    for (int b : members) {
      if (a == b) continue;
      const int n = links[static_cast<size_t>(a)][static_cast<size_t>(b)];
      if (n == kUnknownLinks) return false;
      counts.insert(n);
    }
  return counts.size() > 1;
}

// The greedy NVLink path through `members` (in NUMA order): from the first, always to the rank
// with the most links to the last one taken; on a tie one of the same NUMA node as that one, then
// the earlier in NUMA order. `numa` gives a rank's NUMA node.
template <typename Numa>
std::vector<int> nvlink_path(const PairLinks& links, const std::vector<int>& members, Numa numa) {
  std::vector<int> path = {members.front()};
  std::vector<bool> taken(members.size(), false);
  taken.front() = true;
  while (path.size() < members.size()) {
    const int at = path.back();
    const auto& from = links[static_cast<size_t>(at)];
    // (links, same NUMA node): the larger wins; the first such in NUMA order on a full tie.
    const auto key = [&](size_t i) {
      return std::pair(from[static_cast<size_t>(members[i])], numa(members[i]) == numa(at));
    };
    size_t best = members.size();
    for (size_t i = 0; i < members.size(); ++i)
      if (!taken[i] && (best == members.size() || key(i) > key(best))) best = i;
    taken[best] = true;
    path.push_back(members[best]);
  }
  return path;
}

}  // namespace

std::vector<int> topo_ring_order(const RankLayout& layout) { return topo_ring_order(layout, layout.gpu_links); }

std::vector<int> topo_ring_order(const RankLayout& layout, const PairLinks& links) {
  std::vector<int> order(static_cast<size_t>(layout.nranks));
  for (int r = 0; r < layout.nranks; ++r) order[static_cast<size_t>(r)] = r;
  // Unknown NUMA (-1) sorts after every known node of the same node.
  const auto numa = [&](int r) {
    const int n = static_cast<size_t>(r) < layout.numa_of.size() ? layout.numa_of[static_cast<size_t>(r)] : -1;
    return n < 0 ? std::numeric_limits<int>::max() : n;
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const int na = layout.node_of[static_cast<size_t>(a)], nb = layout.node_of[static_cast<size_t>(b)];
    if (na != nb) return na < nb;
    return numa(a) < numa(b);
  });
  const bool known =
      links.size() == static_cast<size_t>(layout.nranks) &&
      std::all_of(links.begin(), links.end(), [&](const auto& row) { return row.size() == links.size(); });
  if (!known) return order;
  // Each node's run of ranks, reordered by its NVLink path where the links tell more.
  for (auto first = order.begin(); first != order.end();) {
    const int node = layout.node_of[static_cast<size_t>(*first)];
    const auto last =
        std::find_if(first, order.end(), [&](int r) { return layout.node_of[static_cast<size_t>(r)] != node; });
    const std::vector<int> members(first, last);
    if (links_order_node(links, members)) std::copy_n(nvlink_path(links, members, numa).begin(), members.size(), first);
    first = last;
  }
  return order;
}

std::vector<int> ring_order(const RingOrderChoice& choice, const RankLayout& layout) {
  std::vector<int> order;
  switch (choice.kind) {
    case RingOrderKind::rank:
      for (int r = 0; r < layout.nranks; ++r) order.push_back(r);
      break;
    case RingOrderKind::topo: order = topo_ring_order(layout); break;
    case RingOrderKind::list: order = choice.list; break;
  }
  validate_ring_order(order, layout.nranks, "--ring-order " + choice.text);
  return order;
}

bool is_rank_order(const std::vector<int>& order) {
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<int>(i)) return false;
  return true;
}

int ring_position(const std::vector<int>& order, int rank) {
  const auto it = std::find(order.begin(), order.end(), rank);
  if (it == order.end()) fail(ExitCode::runtime, "rank {} is not on the ring", rank);
  return static_cast<int>(it - order.begin());
}

std::string describe_ring_order(const std::vector<int>& order, std::size_t limit) {
  if (order.size() <= limit) return fmt::format("{}", fmt::join(order, " "));
  return fmt::format("{} ... ({} ranks)", fmt::join(order.begin(), order.begin() + static_cast<long>(limit), " "),
                     order.size());
}

}  // namespace ccbench
