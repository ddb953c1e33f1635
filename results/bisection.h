#pragma once
// The culprit search over the whole job (`--groups bisect`): the job's figure (the busbw of one
// collective over every node) is set against halves of the suspects, measured at the same time.
// A half as slow as the whole holds the slow node; a half clearly faster (the whole below
// `threshold` of it) is healthy, and its nodes pad a single suspect into a group of two later.
// The suspects halve each step, so one slow node among N is named after 1 + ceil(log2 N) steps
// (one more where a suspect is left alone without being measured with a healthy node), against
// N(N-1)/2 pair runs one at a time or N-1 rounds of pairs. Pure: the steps are planned here,
// measured by harness/groups/bisect_run.h.
//
// What a step can show, and what the search concludes:
//   one half slow, the other fast  the slow half holds the culprit: go on with it
//   both halves fast               the whole is slower than either half: what is slow joins the
//                                  halves (the links between them), not a node
//   both halves slow               at the start: no half is faster than the whole, so no single
//                                  node stands out (the fabric gives this figure, or slow nodes
//                                  sit in both halves); further down: both halves go on
//   a single node with a healthy one slow: it is named
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ccbench {

struct BisectionGroup {
  std::vector<int> nodes;        // node indices, ascending
  std::vector<int> suspects;     // those of `nodes` under suspicion (the others pad it: known healthy)
  std::optional<double> figure;  // busbw measured, GB/s; nullopt until recorded, or none measured
  std::string verdict;           // "whole", "slow", "fast", "not measured"
};

struct BisectionStep {
  std::vector<BisectionGroup> groups;  // disjoint, measured at the same time
};

class BisectionSearch {
 public:
  // `nodes` >= 2; `threshold` in (0, 1): a group is fast when the whole job's figure is below
  // threshold x its own. `name` names a node in the conclusion (default "node N").
  using NodeName = std::function<std::string(int)>;
  BisectionSearch(int nodes, double threshold, NodeName name = {});

  bool done() const { return done_; }
  // The groups to measure next (valid while !done()).
  const BisectionStep& next() const { return steps_.back(); }
  // The figure of each group of next(), in its order (nullopt: it measured nothing); plans the
  // following step or ends the search.
  void record(const std::vector<std::optional<double>>& figures);

  std::vector<int> culprits() const { return culprits_; }
  std::vector<int> suspects() const { return suspects_; }  // named, but not told apart
  const std::string& conclusion() const { return conclusion_; }
  // Every step measured so far (figures and verdicts filled), and the next one while not done.
  const std::vector<BisectionStep>& steps() const { return steps_; }

 private:
  void plan_next();
  bool plan_split(const std::vector<int>& s);
  bool plan_single(int x);
  std::optional<int> pad_for(const std::vector<int>& s, std::vector<int>& used) const;
  void judge_split();
  void judge_single();
  bool confirmed(int x) const;
  bool healthy(int x) const;
  std::string names(const std::vector<int>& nodes) const;
  void finish();

  int nodes_;
  double threshold_;
  NodeName name_;
  std::optional<double> whole_;
  std::vector<std::vector<int>> pending_;  // suspect sets still to search
  std::vector<int> healthy_;
  std::vector<int> current_;              // the suspect set the step in next() searches
  std::vector<std::vector<int>> halves_;  // its halves (a split), or the one node (a confirmation)
  std::vector<int> half_group_;           // each half's group in next(), -1: not measured
  std::vector<int> culprits_, suspects_;
  std::vector<std::string> findings_;
  std::string conclusion_;
  bool done_ = false;
  bool top_ = true;  // the next split is the first one, of every node
  std::vector<BisectionStep> steps_;
};

// The most steps the search takes for one slow node among `nodes`: the whole, ceil(log2 nodes)
// halvings and one confirmation.
int bisection_step_bound(long long nodes);

// "node 3 (host h3)"-style names are the caller's; this joins node indices as "0,1,2".
std::string node_list(const std::vector<int>& nodes);

}  // namespace ccbench
