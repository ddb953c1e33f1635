#include "transports/labels.h"

#include <algorithm>

#include "transports/ofi/ofi_logic.h"

namespace ccbench {

namespace {

// "net/tcp", "net/tcp:8", "net/ib", "net/ofi:<provider>:hmem|host"; false for anything else.
bool is_net_part(std::string_view part) {
  const std::string net = std::string(name(Transport::net)) + "/";
  if (part.substr(0, net.size()) != net) return false;
  std::string_view rest = part.substr(net.size());
  if (is_ofi_label(rest, true)) return true;
  const auto colon = rest.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view streams = rest.substr(colon + 1);
    if (streams.empty() || !std::all_of(streams.begin(), streams.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    rest = rest.substr(0, colon);
  }
  return rest == name(Transport::tcp) || rest == name(Transport::ib);
}

}  // namespace

bool is_transport_label(std::string_view label) {
  if (label == "-" || label == "none" || label == kNcclLabel) return true;
  const std::string nccl_prefix = std::string(kNcclLabel) + ":";
  if (label.substr(0, nccl_prefix.size()) == nccl_prefix) return label.size() > nccl_prefix.size();
  if (label.empty()) return false;
  std::size_t start = 0;
  while (true) {
    const std::size_t plus = label.find('+', start);
    const std::string_view part = label.substr(start, plus == std::string_view::npos ? plus : plus - start);
    const auto t = parse_transport(part);
    // auto is a choice, net is always labelled with its backend ("net/tcp"), and ofi with its
    // provider and protocol ("ofi:shm:rma").
    const bool named = t && *t != Transport::auto_select && *t != Transport::net;
    if (!named && !is_net_part(part) && !is_ofi_label(part, false)) return false;
    if (plus == std::string_view::npos) return true;
    start = plus + 1;
  }
}

std::vector<std::string> transport_label_words() {
  std::vector<std::string> out;
  for (const TransportName& n : transport_table())
    if (n.id != Transport::auto_select && n.id != Transport::net) out.emplace_back(n.name);
  for (const char* more : {"net/tcp", "net/ib", "nccl", "none"}) out.emplace_back(more);
  return out;
}

}  // namespace ccbench
