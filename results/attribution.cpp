#include "results/attribution.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "results/stats.h"

namespace ccbench {

using Json = nlohmann::ordered_json;

namespace {

// "HOST:R" at the start of `s`: its length, or 0. A host name holds no ':'.
size_t rank_end_length(const std::string& s) {
  const size_t colon = s.find(':');
  if (colon == std::string::npos || colon == 0) return 0;
  size_t i = colon + 1;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  return i > colon + 1 ? i : 0;
}

// Samples of one link merged: by value its lowest figure, by verdict failed when any failed.
std::vector<LinkJudgement> merged(const std::vector<LinkSample>& samples, bool by_value) {
  std::map<std::string, LinkJudgement> by_name;
  for (const LinkSample& s : samples) {
    auto [it, fresh] = by_name.try_emplace(s.link, LinkJudgement{s.link, s.a, s.b, s.value, s.failed, ""});
    if (fresh) continue;
    if (by_value) it->second.value = std::min(it->second.value, s.value);
    it->second.failed = it->second.failed || s.failed;
  }
  std::vector<LinkJudgement> out;
  for (auto& [name, l] : by_name) out.push_back(std::move(l));
  return out;
}

std::set<std::string> endpoints_of(const std::vector<LinkJudgement>& links) {
  std::set<std::string> e;
  for (const LinkJudgement& l : links) {
    e.insert(l.a);
    e.insert(l.b);
  }
  return e;
}

bool touches(const LinkJudgement& l, const std::string& e) { return l.a == e || l.b == e; }

// The endpoint of `core` whose fastest link within the core is furthest below the median of the
// core's links not involving it, with that ratio; nullopt when none can be compared.
std::optional<std::pair<std::string, double>> slowest_endpoint(const std::vector<LinkJudgement>& links,
                                                               const std::set<std::string>& core) {
  std::optional<std::pair<std::string, double>> best;
  for (const std::string& h : core) {
    double own = -1;
    std::vector<double> others;
    for (const LinkJudgement& l : links) {
      if (!core.count(l.a) || !core.count(l.b)) continue;
      if (touches(l, h)) own = std::max(own, l.value);
      else others.push_back(l.value);
    }
    if (own < 0 || others.empty()) continue;
    const double reference = median_of(others);
    if (reference <= 0) continue;
    const double ratio = own / reference;
    if (!best || ratio < best->second) best = std::pair{h, ratio};
  }
  return best;
}

std::string fraction_percent(double v) { return fmt::format("{:.0f}%", 100 * v); }

// The evidence of a culprit or suspect: its links' figures (by value) and the links not involving it.
std::string against_the_others(const Attribution& a, const std::string& e, const char* verb_pass) {
  int others = 0, others_passing = 0;
  for (const LinkJudgement& l : a.links)
    if (!touches(l, e)) {
      ++others;
      others_passing += !l.failed;
    }
  if (others == 0) return "";
  return fmt::format(", while {} of the {} link{} not involving it {}", others_passing, others, others == 1 ? "" : "s",
                     verb_pass);
}

std::string own_links(const Attribution& a, const std::string& e, int n) {
  const char* failing = a.by_value ? "slow" : "failed";
  if (!a.by_value) return fmt::format("all {} of its links {}", n, failing);
  double lo = std::numeric_limits<double>::max(), hi = 0;
  for (const LinkJudgement& l : a.links)
    if (touches(l, e)) {
      lo = std::min(lo, l.value);
      hi = std::max(hi, l.value);
    }
  const double ref = *a.reference;
  return fmt::format("all {} of its links below {} of {:.3g} GB/s ({:.3g} to {:.3g} GB/s, {} to {})", n,
                     fraction_percent(a.threshold), ref, lo, hi, fraction_percent(lo / ref),
                     fraction_percent(hi / ref));
}

void write_evidence(Attribution& a, size_t endpoint_count) {
  const char* pass = a.by_value ? "are not" : "passed";
  for (EndpointFinding& f : a.endpoints) {
    if (f.role == EndpointRole::culprit) {
      f.evidence = own_links(a, f.endpoint, f.links) + against_the_others(a, f.endpoint, pass);
    } else if (f.role == EndpointRole::suspect) {
      f.evidence = own_links(a, f.endpoint, f.links) + " and none reaches an endpoint proven fine by a passing link: " +
                   (endpoint_count == 2 ? "with 2 endpoints a failing link cannot be pinned on one end (or on the link "
                                          "itself); measure with a third"
                                        : "several of them are slow, or something they share is");
    } else if (f.failed_links == 0) {
      f.evidence = fmt::format("all {} of its links pass", f.links);
    } else {
      std::set<std::string> blamed;
      for (const LinkJudgement& l : a.links)
        if (l.failed && touches(l, f.endpoint)) blamed.insert(l.blame == "link" ? l.link + " itself" : l.blame);
      std::string who;
      for (const std::string& b : blamed) who += (who.empty() ? "" : ", ") + b;
      f.evidence = fmt::format("{} of its {} links pass; its failing links are put on {}", f.links - f.failed_links,
                               f.links, who);
    }
  }
}

// Roles from the links' pass/fail: fine on a passing link, else culprit with a failing link to a
// fine endpoint, else suspect; then each failing link's blame and the evidence.
void assign_roles(Attribution& a) {
  const std::set<std::string> all = endpoints_of(a.links);
  std::set<std::string> fine;
  for (const LinkJudgement& l : a.links)
    if (!l.failed) {
      fine.insert(l.a);
      fine.insert(l.b);
    }
  std::map<std::string, EndpointFinding> found;
  for (const std::string& e : all) found[e].endpoint = e;
  for (const LinkJudgement& l : a.links)
    for (const std::string* end : {&l.a, &l.b}) {
      EndpointFinding& f = found[*end];
      ++f.links;
      f.failed_links += l.failed;
      const std::string& other = end == &l.a ? l.b : l.a;
      if (!fine.count(*end) && l.failed && fine.count(other)) f.role = EndpointRole::culprit;
    }
  for (auto& [e, f] : found)
    if (!fine.count(e) && f.role != EndpointRole::culprit) f.role = EndpointRole::suspect;
  for (LinkJudgement& l : a.links) {
    if (!l.failed) continue;
    const EndpointRole ra = found[l.a].role, rb = found[l.b].role;
    if (ra == EndpointRole::fine && rb == EndpointRole::fine) l.blame = "link";
    else if (ra == EndpointRole::culprit && rb == EndpointRole::culprit) l.blame = l.a + "+" + l.b;
    else if (ra == EndpointRole::culprit && rb == EndpointRole::fine) l.blame = l.a;
    else if (rb == EndpointRole::culprit && ra == EndpointRole::fine) l.blame = l.b;
    else l.blame = "ambiguous";
  }
  for (EndpointRole role : {EndpointRole::culprit, EndpointRole::suspect, EndpointRole::fine})
    for (auto& [e, f] : found)
      if (f.role == role) a.endpoints.push_back(f);
  write_evidence(a, all.size());
}

}  // namespace

const char* role_name(EndpointRole r) {
  return r == EndpointRole::culprit ? "culprit" : r == EndpointRole::suspect ? "suspect" : "fine";
}

std::optional<std::pair<std::string, std::string>> link_endpoints(const std::string& link) {
  const size_t first = rank_end_length(link);
  if (first == 0 || first >= link.size() || link[first] != '-') return std::nullopt;
  const std::string a = link.substr(0, first), b = link.substr(first + 1);
  if (rank_end_length(b) != b.size()) return std::nullopt;  // "HOST:R-host", or not a link
  const std::string host_a = a.substr(0, a.find(':')), host_b = b.substr(0, b.find(':'));
  if (host_a != host_b) return std::pair{host_a, host_b};
  return std::pair{a, b};
}

std::vector<std::string> Attribution::culprits() const {
  std::vector<std::string> out;
  for (const EndpointFinding& f : endpoints)
    if (f.role == EndpointRole::culprit) out.push_back(f.endpoint);
  return out;
}

std::vector<std::string> Attribution::suspects() const {
  std::vector<std::string> out;
  for (const EndpointFinding& f : endpoints)
    if (f.role == EndpointRole::suspect) out.push_back(f.endpoint);
  return out;
}

int Attribution::failed_links() const {
  return static_cast<int>(std::count_if(links.begin(), links.end(), [](const LinkJudgement& l) { return l.failed; }));
}

std::string Attribution::blame_of(const std::string& link) const {
  for (const LinkJudgement& l : links)
    if (l.link == link) return l.blame;
  return "";
}

Attribution attribute_by_value(const std::vector<LinkSample>& samples, double threshold) {
  Attribution a;
  a.by_value = true;
  a.threshold = threshold;
  a.links = merged(samples, true);
  std::set<std::string> core = endpoints_of(a.links);
  if (core.size() < 3) {
    a.note = fmt::format(
        "{} endpoint{}: with fewer than 3 a link has no other link to be compared with (an "
        "absolute floor, `accept --rules`, can judge it)",
        core.size(), core.size() == 1 ? "" : "s");
    return a;
  }
  // Take out the slowest endpoint while its fastest link stays below the threshold of the links
  // among the others: what remains is the healthy core whose median is the reference.
  while (core.size() >= 3) {
    const auto slowest = slowest_endpoint(a.links, core);
    if (!slowest || slowest->second >= threshold) break;
    core.erase(slowest->first);
  }
  std::vector<double> healthy;
  for (const LinkJudgement& l : a.links)
    if (core.count(l.a) && core.count(l.b)) healthy.push_back(l.value);
  if (healthy.empty() || median_of(healthy) <= 0) {
    a.note = "no link among the endpoints left to compare with moved data";
    return a;
  }
  a.reference = median_of(healthy);
  for (LinkJudgement& l : a.links) l.failed = l.value < threshold * *a.reference;
  assign_roles(a);
  return a;
}

Attribution attribute_by_verdict(const std::vector<LinkSample>& samples) {
  Attribution a;
  a.by_value = false;
  a.links = merged(samples, false);
  assign_roles(a);
  return a;
}

std::string attribution_text(const Attribution& a, const std::string& subject, const std::string& prefix) {
  if (!a.note.empty()) return fmt::format("{}culprit ({}): not judged: {}\n", prefix, subject, a.note);
  std::string s;
  for (const EndpointFinding& f : a.endpoints)
    if (f.role != EndpointRole::fine)
      s += fmt::format("{}{} ({}): {}: {}\n", prefix, role_name(f.role), subject, f.endpoint, f.evidence);
  for (const LinkJudgement& l : a.links)
    if (l.blame == "link")
      s += a.by_value
               ? fmt::format(
                     "{}link at fault ({}): {}: {:.3g} GB/s, {} of {:.3g}, while {} and {} are fine on "
                     "their other links\n",
                     prefix, subject, l.link, l.value, fraction_percent(l.value / *a.reference), *a.reference, l.a, l.b)
               : fmt::format("{}link at fault ({}): {}: it failed, while {} and {} pass on other links\n", prefix,
                             subject, l.link, l.a, l.b);
  if (a.failed_links() == 0)
    s += a.by_value ? fmt::format("{}culprit ({}): none: all {} links within {} of {:.3g} GB/s\n", prefix, subject,
                                  a.links.size(), fraction_percent(a.threshold), *a.reference)
                    : fmt::format("{}culprit ({}): none: all {} links passed\n", prefix, subject, a.links.size());
  return s;
}

Json attribution_json(const Attribution& a, const std::string& subject) {
  Json endpoints = Json::array(), links = Json::array();
  for (const EndpointFinding& f : a.endpoints)
    endpoints.push_back({{"endpoint", f.endpoint},
                         {"role", role_name(f.role)},
                         {"links", f.links},
                         {"failed_links", f.failed_links},
                         {"evidence", f.evidence}});
  for (const LinkJudgement& l : a.links)
    links.push_back({{"link", l.link},
                     {"value_GBps", a.by_value ? Json(l.value) : Json(nullptr)},
                     {"failed", l.failed},
                     {"blame", l.blame}});
  return {{"subject", subject},
          {"by", a.by_value ? "value" : "verdict"},
          {"threshold", a.by_value ? Json(a.threshold) : Json(nullptr)},
          {"reference_GBps", a.reference ? Json(*a.reference) : Json(nullptr)},
          {"culprits", a.culprits()},
          {"suspects", a.suspects()},
          {"endpoints", endpoints},
          {"links", links},
          {"note", a.note}};
}

}  // namespace ccbench
