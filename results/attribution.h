#pragma once
// Which host is to blame for slow links. A host with a slow NIC, cable or switch port makes every
// link through it slow: with 4 hosts, 3 of the 6 links; with 3 hosts, 2 of 3. Judging each link
// against the median of all of them then flags links of healthy hosts (the median is the slow
// host's own figure when half the links pass through it), and naming each link's ends fails every
// host. Attribution instead asks, of each endpoint, whether its links are slow while the links
// not involving it are fine:
//   - a link that passes proves both its ends capable ("fine");
//   - an endpoint none of whose links passes, with a failing link to a fine endpoint, is a
//     CULPRIT: its links fail, the links among the others do not;
//   - an endpoint none of whose links passes and none of whose links reaches a fine endpoint is
//     a SUSPECT: nothing tells it from its partners (2 hosts; every link failing);
//   - a failing link between two fine endpoints is the link's own fault (cable, port, switch).
// By value (bandwidths of `ccbench links` and `--groups pairs`), a link fails when it is below
// `threshold` of the healthy figure: the median of the links among the endpoints left after
// taking out, one at a time, the endpoint whose fastest link is furthest below the median of the
// links not involving it (while that is below `threshold`). This assumes most endpoints are
// healthy: with half or more of them slow, a ratio cannot tell which half is; absolute floors
// (`accept` rules) can. By verdict (`accept`), a link fails when a row of it broke a rule.
// Pure: no MPI, no I/O.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccbench {

// The two ends of a link named by results/links.h link_name() ("HOST:R-HOST:R"): the hosts when
// they differ (one link of each host pair is a link between hosts), else "HOST:R" of each rank
// (ranks of one host, emulated nodes). nullopt for a rank and its host memory ("HOST:R-host")
// or a name that is not a link's.
std::optional<std::pair<std::string, std::string>> link_endpoints(const std::string& link);

// One measurement of a link. Several samples of one link (both directions, several rows) are one
// link: by value its lowest figure, by verdict failed when any sample failed.
struct LinkSample {
  std::string link;     // its name
  std::string a, b;     // its ends (link_endpoints())
  double value = 0;     // by value: bandwidth, GB/s, higher is better
  bool failed = false;  // by verdict
};

enum class EndpointRole { fine, culprit, suspect };
const char* role_name(EndpointRole r);  // "fine", "culprit", "suspect"

struct EndpointFinding {
  std::string endpoint;
  EndpointRole role = EndpointRole::fine;
  int links = 0, failed_links = 0;
  std::string evidence;  // one sentence, the figures or links that decided
};

struct LinkJudgement {
  std::string link, a, b;
  double value = 0;  // by value: its lowest figure
  bool failed = false;
  std::string blame;  // a failing link's culprit endpoint, "link" (its own fault), "ambiguous"; "" when it passed
};

struct Attribution {
  bool by_value = true;
  double threshold = 0;                    // by value
  std::optional<double> reference;         // by value: the healthy figure links are judged against
  std::vector<EndpointFinding> endpoints;  // culprits, then suspects, then fine; by name within each
  std::vector<LinkJudgement> links;        // by name
  std::string note;  // why nothing could be judged (fewer than 3 endpoints by value); "" otherwise

  std::vector<std::string> culprits() const;
  std::vector<std::string> suspects() const;
  int failed_links() const;
  // The blame of a link by name ("" when it passed or is not in the attribution).
  std::string blame_of(const std::string& link) const;
};

// By value: `threshold` in (0, 1], as --outlier-threshold.
Attribution attribute_by_value(const std::vector<LinkSample>& samples, double threshold);
// By verdict: failed or passed as given.
Attribution attribute_by_verdict(const std::vector<LinkSample>& samples);

// For people, one line per finding, each starting with `prefix` ("# "): the culprits with their
// evidence, the suspects and why, the links at fault themselves, or that every link is fine.
// `subject` says what was judged ("tcp one-way at 16 MiB").
std::string attribution_text(const Attribution& a, const std::string& subject, const std::string& prefix);
// {"subject", "by" ("value"|"verdict"), "threshold", "reference_GBps", "culprits", "suspects",
//  "endpoints": [{"endpoint", "role", "links", "failed_links", "evidence"}],
//  "links": [{"link", "value_GBps", "failed", "blame"}], "note"}.
nlohmann::ordered_json attribution_json(const Attribution& a, const std::string& subject);

}  // namespace ccbench
