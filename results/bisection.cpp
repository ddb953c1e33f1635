#include "results/bisection.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ccbench {

namespace {

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<int> sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

std::string node_list(const std::vector<int>& nodes) {
  std::string s;
  for (int n : nodes) s += (s.empty() ? "" : ",") + std::to_string(n);
  return s;
}

int bisection_step_bound(long long nodes) {
  if (nodes < 2) return 0;
  return 2 + static_cast<int>(std::ceil(std::log2(static_cast<double>(nodes))));
}

BisectionSearch::BisectionSearch(int nodes, double threshold, NodeName name)
    : nodes_(nodes), threshold_(threshold), name_(std::move(name)) {
  if (!name_) name_ = [](int n) { return fmt::format("node {}", n); };
  BisectionGroup all;
  for (int n = 0; n < nodes; ++n) all.nodes.push_back(n);
  all.suspects = all.nodes;
  pending_.push_back(all.nodes);
  steps_.push_back({{all}});
}

std::string BisectionSearch::names(const std::vector<int>& nodes) const {
  std::string s;
  for (int n : nodes) s += (s.empty() ? "" : ", ") + name_(n);
  return s;
}

bool BisectionSearch::healthy(int x) const { return contains(healthy_, x); }

// x was measured slow in a group whose other nodes are all known healthy.
bool BisectionSearch::confirmed(int x) const {
  for (const BisectionStep& step : steps_)
    for (const BisectionGroup& g : step.groups)
      if (g.verdict == "slow" && contains(g.nodes, x) &&
          std::all_of(g.nodes.begin(), g.nodes.end(), [&](int n) { return n == x || healthy(n); }))
        return true;
  return false;
}

// A node to pad a single suspect of `s` into a group of two: a healthy one, else one under no
// suspicion that the search has not cleared either; none taken twice (`used`).
std::optional<int> BisectionSearch::pad_for(const std::vector<int>& s, std::vector<int>& used) const {
  for (int h : healthy_)
    if (!contains(used, h)) {
      used.push_back(h);
      return h;
    }
  for (int n = 0; n < nodes_; ++n) {
    const bool suspected = contains(s, n) || contains(culprits_, n) || contains(suspects_, n) ||
                           std::any_of(pending_.begin(), pending_.end(), [&](const auto& p) { return contains(p, n); });
    if (!suspected && !contains(used, n)) {
      used.push_back(n);
      return n;
    }
  }
  return std::nullopt;
}

bool BisectionSearch::plan_split(const std::vector<int>& s) {
  const size_t half = (s.size() + 1) / 2;
  current_ = s;
  halves_ = {std::vector<int>(s.begin(), s.begin() + static_cast<long>(half)),
             std::vector<int>(s.begin() + static_cast<long>(half), s.end())};
  half_group_.assign(2, -1);
  BisectionStep step;
  std::vector<int> used;
  for (size_t i = 0; i < 2; ++i) {
    BisectionGroup g;
    g.suspects = halves_[i];
    g.nodes = halves_[i];
    if (g.nodes.size() == 1) {
      const auto pad = pad_for(s, used);
      if (!pad) continue;
      g.nodes.push_back(*pad);
    }
    g.nodes = sorted(g.nodes);
    half_group_[i] = static_cast<int>(step.groups.size());
    step.groups.push_back(std::move(g));
  }
  if (step.groups.empty()) return false;
  steps_.push_back(std::move(step));
  return true;
}

// A single suspect x is measured with a healthy node; with none known yet, the nodes under no
// suspicion are measured together first (fast: they are healthy, and x is confirmed by an
// earlier slow group with them).
bool BisectionSearch::plan_single(int x) {
  std::vector<int> used;
  const auto pad = pad_for({x}, used);
  if (!pad) return false;
  current_ = {x};
  halves_ = {{x}};
  half_group_ = {0};
  if (healthy(*pad)) {
    steps_.push_back({{BisectionGroup{sorted({x, *pad}), {x}, std::nullopt, ""}}});
    return true;
  }
  while (pad_for({x}, used)) {}
  if (used.size() < 2) return false;
  steps_.push_back({{BisectionGroup{sorted(used), {}, std::nullopt, ""}}});
  return true;
}

void BisectionSearch::plan_next() {
  while (!pending_.empty()) {
    const std::vector<int> s = pending_.front();
    pending_.erase(pending_.begin());
    if (s.size() >= 2) {
      if (plan_split(s)) return;
      suspects_.insert(suspects_.end(), s.begin(), s.end());
      findings_.push_back(
          fmt::format("{} cannot be told apart: there is no other node to measure each with", names(s)));
      continue;
    }
    const int x = s.front();
    if (confirmed(x)) {
      culprits_.push_back(x);
      continue;
    }
    if (plan_single(x)) return;
    suspects_.push_back(x);
    findings_.push_back(fmt::format("{} holds the slowness, but no other node is left to confirm it with", name_(x)));
  }
  finish();
}

void BisectionSearch::finish() {
  done_ = true;
  std::sort(culprits_.begin(), culprits_.end());
  std::sort(suspects_.begin(), suspects_.end());
  std::string s;
  if (!culprits_.empty()) s = fmt::format("culprit{}: {}", culprits_.size() == 1 ? "" : "s", names(culprits_));
  for (const std::string& f : findings_) s += (s.empty() ? "" : "; ") + f;
  conclusion_ = s.empty() ? "no culprit" : s;
}

void BisectionSearch::judge_split() {
  BisectionStep& step = steps_.back();
  auto verdict = [&](size_t i) -> std::string {
    return half_group_[i] < 0 ? "not measured" : step.groups[static_cast<size_t>(half_group_[i])].verdict;
  };
  const std::string v0 = verdict(0), v1 = verdict(1);
  const bool top = top_;
  top_ = false;
  if (v0 == "fast" && v1 == "fast") {
    findings_.push_back(
        fmt::format("{} together are slower than either half: what is slow joins the halves (the links "
                    "between them), not a node",
                    names(current_)));
    return;
  }
  if (v0 == "slow" && v1 == "slow") {
    if (!top) {
      pending_.push_back(halves_[0]);
      pending_.push_back(halves_[1]);
      return;
    }
    findings_.push_back(
        "no half is faster than the whole job: no single node stands out (the fabric gives this "
        "figure, or slow nodes sit in both halves: --groups pairs tells them apart)");
    return;
  }
  for (size_t i = 0; i < 2; ++i) {
    const std::string mine = i == 0 ? v0 : v1, other = i == 0 ? v1 : v0;
    if (mine == "slow" || (mine == "not measured" && other == "fast")) pending_.push_back(halves_[i]);
  }
  if (v0 == "not measured" && v1 == "not measured")
    findings_.push_back(fmt::format("{} could not be measured in halves", names(current_)));
}

void BisectionSearch::judge_single() {
  const BisectionGroup& g = steps_.back().groups.front();
  const int x = current_.front();
  if (g.suspects.empty()) {  // the nodes under no suspicion, measured to clear them
    if (g.verdict == "fast") {
      pending_.insert(pending_.begin(), {x});
    } else {
      suspects_.push_back(x);
      findings_.push_back(
          fmt::format("{} is slow, but so are {} without it: more than one node is slow", name_(x), names(g.nodes)));
    }
    return;
  }
  if (g.verdict == "slow") {
    culprits_.push_back(x);
  } else if (g.verdict == "fast") {
    findings_.push_back(fmt::format("{} is fast with a healthy node: what is slow is not one node", name_(x)));
  } else {
    suspects_.push_back(x);
    findings_.push_back(fmt::format("{} could not be measured with a healthy node", name_(x)));
  }
}

void BisectionSearch::record(const std::vector<std::optional<double>>& figures) {
  BisectionStep& step = steps_.back();
  for (size_t i = 0; i < step.groups.size() && i < figures.size(); ++i) step.groups[i].figure = figures[i];
  if (!whole_) {
    step.groups.front().verdict = "whole";
    whole_ = step.groups.front().figure;
    if (!whole_ || *whole_ <= 0) {
      findings_.push_back("the whole job measured no figure to compare halves with");
      finish();
      return;
    }
    plan_next();
    return;
  }
  for (BisectionGroup& g : step.groups) {
    if (!g.figure || *g.figure <= 0) g.verdict = "not measured";
    else g.verdict = *whole_ < threshold_ * *g.figure ? "fast" : "slow";
    if (g.verdict == "fast")  // every node of a fast group is healthy
      for (int n : g.nodes)
        if (!healthy(n)) healthy_.push_back(n);
  }
  if (halves_.size() == 2) judge_split();
  else judge_single();
  plan_next();
}

}  // namespace ccbench
