// libFuzzer target: the command-line parser (harness/app/cli.h) and the option layer under it
// (core/cli_options.h). The input is the argument list, one argument per line. Properties: bad
// input is Error(usage) (any other exception or a crash is a finding); accepted options are
// within the documented ranges, and transports are names of core/transport_names.h valid where given.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/app/cli.h"
#include "tests/fuzz/fuzz_check.h"
#include "core/transport_names.h"

using namespace ccbench;
using fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args{"ccbench"};
  while (!text.empty() && args.size() < 64) {
    auto nl = text.find('\n');
    args.emplace_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  Command cmd;
  try {
    cmd = parse_command_line(static_cast<int>(argv.size()), argv.data());
  } catch (const Error& e) {
    fuzz::require_usage(e);
    return 0;
  }
  if (auto* o = std::get_if<RunOptions>(&cmd)) {
    require(o->sweep.min_bytes >= 1, "-b 0 accepted");
    require(!o->max_given || o->sweep.min_bytes <= o->sweep.max_bytes, "-b > -e accepted");
    require(o->sweep.increment > 0 || o->sweep.factor > 1 || (o->max_given && o->sweep.min_bytes == o->sweep.max_bytes),
            "a sweep that never advances accepted");
    require(o->iterations >= 1 && o->warmup >= 0 && o->cycles >= 0 && o->graph_launches >= 0 && o->root >= 0,
            "a negative or zero count accepted");
    require(o->timeout.count() >= 1, "a timeout below 1 ms accepted");
    require(
        !o->collectives.empty() && !o->dtypes.empty() && !o->ops.empty() && !o->impls.empty() && !o->formats.empty(),
        "an empty list accepted");
    require(o->no_files || o->out_dir != "none", "--out none not recognised");
    const auto t = parse_transport(o->transport);
    require(t && valid_in(*t, kRunScopes) && name(*t) == o->transport, "a transport outside the table accepted");
  } else if (auto* c = std::get_if<CompareRequest>(&cmd)) {
    require(c->options.tolerance >= 0 && c->options.tolerance < 1, "a tolerance outside [0, 1) accepted");
  } else if (auto* l = std::get_if<LinksOptions>(&cmd)) {
    require(l->min_bytes >= 1 && (l->max_bytes == 0 || l->min_bytes <= l->max_bytes) && l->factor > 1,
            "a links sweep that is empty or never advances accepted");
    require(l->iterations >= 1 && l->warmup >= 0 && l->timeout.count() >= 1, "a links count or timeout out of range");
    require(!l->transports.empty(), "an empty links transport list accepted");
    for (Transport t : l->transports) require(valid_in(t, kLinksScopes), "a transport links cannot measure accepted");
  } else if (auto* m = std::get_if<ModelRequest>(&cmd)) {
    require(m->sweep.min_bytes >= 1 && m->sweep.min_bytes <= m->sweep.max_bytes, "an empty model sweep accepted");
  } else if (auto* h = std::get_if<HelpRequest>(&cmd)) {
    require(!h->text.empty(), "an empty help text");
  }
  return 0;
}
