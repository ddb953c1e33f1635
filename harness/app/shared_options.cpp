#include "harness/app/shared_options.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/knobs.h"
#include "results/metrics.h"

namespace ccbench {

namespace {

constexpr int kMaxIterations = 1000000;

std::string timeout_text() {
  return fmt::format("seconds from {:g} to {:g} = a week; 0 = a week", kMinTimeoutSeconds, kMaxTimeoutSeconds);
}

// "auto, shm, mpi, tcp, ib on CPU ranks; auto, p2p, ... on GPU ranks": the table, as help says it.
std::string per_rank_kind(unsigned cpu, unsigned gpu) {
  return fmt::format("CPU ranks: {}; GPU ranks: {}", valid_transports(cpu), valid_transports(gpu));
}

template <typename T>
cli::Names<T> names_of(const T* all, std::size_t n, std::optional<T> (*parse)(std::string_view)) {
  cli::Names<T> names;
  for (std::size_t i = 0; i < n; ++i) names.canonical.emplace_back(std::string(name(all[i])), all[i]);
  names.parse = parse;
  return names;
}

}  // namespace

void add_min_bytes(cli::OptionSet& set, std::uint64_t& target) {
  set.size({"-b,--minbytes", "smallest size; in links also the size of the latency ping-pong", "",
            "same: the first size of the sweep"},
           target);
}

void add_max_bytes(cli::OptionSet& set, std::uint64_t& target, const std::string& max_default) {
  set.size({"-e,--maxbytes", "largest size", max_default, "same: the last size of the sweep"}, target);
}

void add_step_factor(cli::OptionSet& set, double& target) {
  set.number(
      {"-f,--stepfactor", "multiply the size by this factor each step", "", "same: the size multiplier between steps"},
      target, {.lo = 1, .what = "a factor", .lo_open = true, .why = "1 or less never advances the sweep"}, "FACTOR");
}

void add_iterations(cli::OptionSet& set, int& iters, int& warmup) {
  set.integer({"-n,--iters", "timed iterations per size; in links, messages per size and pair", "",
               "same: timed iterations per size"},
              iters, 1, kMaxIterations, "the number of timed iterations");
  set.integer({"-w,--warmup_iters", "warm-up iterations per size, not timed; in links, messages per size and pair", "",
               "same: warm-up iterations per size"},
              warmup, 0, kMaxIterations, "the number of warm-up iterations");
}

void add_device(cli::OptionSet& set, DeviceChoice& target) {
  set.choice(
      {"--device", "which ranks to measure: GPU ranks (one per GPU) or CPU ranks", "auto: GPUs when present"}, target,
      cli::Names<DeviceChoice>{
          {{"auto", DeviceChoice::auto_detect}, {"cpu", DeviceChoice::cpu}, {"gpu", DeviceChoice::gpu}}, nullptr});
}

void add_timeout(cli::OptionSet& set, std::chrono::milliseconds& target) {
  const std::string label = "-T/--timeout";
  set.value({"-T,--timeout",
             "seconds one phase (a set-up step, a wait for a peer, a measurement) may take before the run ends "
             "with exit code 5",
             "", "same, except that 0 (no timeout) is a week"},
            "SECONDS", timeout_text(), fmt::format("{:g}", target.count() / 1000.0),
            [&target, label](const std::string& v) {
              double s = 0;
              auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), s);
              if (v.empty() || ec != std::errc() || end != v.data() + v.size() || !std::isfinite(s))
                fail(ExitCode::usage, "{}: '{}' is not a number; expected {}", label, v, timeout_text());
              if (s == 0) s = kMaxTimeoutSeconds;
              if (s < kMinTimeoutSeconds || s > kMaxTimeoutSeconds)
                fail(ExitCode::usage, "{}: '{}' is not valid; expected {}", label, v, timeout_text());
              target = std::chrono::milliseconds(static_cast<long long>(s * 1000));
            });
}

void add_out(cli::OptionSet& set, std::string& target) {
  set.value(
      {"--out", "results folder (created if missing), or none for no files", "./ccbench-results/<UTC time>-<host>"},
      "FOLDER", "", "", [&target](const std::string& v) {
        if (v.empty()) fail(ExitCode::usage, "--out: empty path; give a results folder, or none");
        target = v;
      });
}

void add_overwrite(cli::OptionSet& set, bool& target) {
  set.flag({"--overwrite", "replace the results of an earlier run in --out (refused without it)"}, target);
}

void add_run_transport(cli::OptionSet& set, std::string& target) {
  set.value({"--transport",
             "the one path every pair uses, NCCL pinned to the same; one per launch (scripts/paths.sh runs several); "
             "tcp: CCBENCH_TCP_IF picks the interface",
             "auto"},
            "NAME", per_rank_kind(kCpuRanks, kGpuRanks), "", [&target](const std::string& v) {
              // NCCL caches its path settings per process, so several side by side are several launches.
              if (v.find(',') != std::string::npos)
                fail(ExitCode::usage,
                     "--transport {}: one transport per launch (NCCL caches its path settings per "
                     "process); to measure several side by side run scripts/paths.sh --transport {} -- <ccbench "
                     "options>",
                     v, v);
              target = name(parse_transport_for(v, kRunScopes, "--transport"));
            });
}

void add_links_transports(cli::OptionSet& set, std::vector<Transport>& target) {
  set.value(
      {"--transport", "what to measure, comma-separated: CPU channels, or the ways GPU ranks drive a link", "auto"},
      "LIST", per_rank_kind(kCpuLinks, kGpuLinks), "", [&target](const std::string& v) {
        std::vector<Transport> out;
        for (const std::string& item : cli::split_list(v)) {
          const Transport t = parse_transport_for(item, kLinksScopes, "--transport");
          if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
        }
        if (out.empty()) cli::fail_empty_list("--transport", valid_transports(kLinksScopes));
        target = out;
      });
}

void add_db(cli::OptionSet& set, std::string& target, const std::string& help) {
  set.text({"--db", help, "CCBENCH_DB"}, target, "FILE/URL");
}

void add_metrics(cli::OptionSet& set, std::string& target, const std::string& help) {
  set.value({"--metrics", help}, "FILE", "a file name ending in .prom", "", [&target](const std::string& v) {
    check_metrics_path(v);
    target = v;
  });
}

std::string history_path(const std::string& given) {
  if (!given.empty()) return given;
  return env_text(Knob::db).value_or("");
}

cli::Names<Collective> collective_names() {
  return names_of(kAllCollectives, std::size(kAllCollectives), parse_collective);
}
cli::Names<DataType> data_type_names() { return names_of(kAllDataTypes, std::size(kAllDataTypes), parse_data_type); }
cli::Names<ReduceOp> reduce_op_names() { return names_of(kAllReduceOps, std::size(kAllReduceOps), parse_reduce_op); }

void add_ib_options(cli::OptionSet& set, IbOptions& ib, bool with_gpudirect) {
  set.group("RDMA (--transport ib)");
  set.value({"--ib-dev", "RDMA device and port", "the first active port"}, "NAME[:PORT]", "", "",
            [&ib](const std::string& v) { parse_ib_device(v, &ib); });
  set.integer({"--gid-index", "GID table index", "RoCE: a RoCE v2 IPv4 GID; IB: 0"}, ib.gid_index, 0, 255,
              "a GID index");
  set.integer({"--ib-qps", "RC queue pairs per peer"}, ib.qps_per_peer, 1, kMaxQpsPerPeer, "queue pairs per peer");
  set.size({"--ib-chunk", "bytes per RDMA WRITE"}, ib.chunk_bytes);
  set.integer({"--ib-mtu", "path MTU: 256, 512, 1024, 2048 or 4096", "the ports' active MTU"}, ib.mtu, 256, 4096,
              "256, 512, 1024, 2048 or 4096");
  set.integer({"--ib-tc", "traffic class (RoCE / GRH)"}, ib.traffic_class, 0, 255, "a traffic class");
  set.integer({"--ib-sl", "service level (InfiniBand)"}, ib.service_level, 0, 15, "a service level");
  if (with_gpudirect)
    set.choice({"--gpudirect",
                "ib and ofi on GPU ranks: FIFO slots in GPU memory (on: registered through dma-buf where the GPU "
                "exports them, FI_HMEM for ofi where the provider takes it), or staged through pinned host memory "
                "(off)"},
               ib.gpudirect, cli::Names<bool>{{{"on", true}, {"off", false}}, nullptr});
  set.group("");
}

void add_ofi_options(cli::OptionSet& set, OfiOptions& ofi) {
  set.group("libfabric (--transport ofi)");
  set.value(
      {"--ofi-provider",
       "libfabric provider as fi_info names it (tcp;ofi_rxm, shm, efa, cxi ...; tcp names "
       "tcp;ofi_rxm); ccbench topo lists each host's",
       fmt::format("the first every rank offers of {}; shm on one node only", fmt::join(kOfiProviderOrder, ", "))},
      "NAME", "", "", [&ofi](const std::string& v) {
        check_ofi_name(v, "--ofi-provider", "provider");
        ofi.provider = v;
      });
  set.value({"--ofi-domain", "the provider's domain: a NIC or an interface (cxi0, rdmap0s6, lo ...)",
             "one host: lo where the provider has it; else its first other domain"},
            "NAME", "", "", [&ofi](const std::string& v) {
              check_ofi_name(v, "--ofi-domain", "domain");
              ofi.domain = v;
            });
  cli::Names<OfiProtocol> protocols;
  for (OfiProtocol p : kOfiProtocols) protocols.canonical.emplace_back(std::string(name(p)), p);
  set.choice({"--ofi-protocol",
              "how slots move: rma = RMA writes with remote CQ data, tagged = tagged messages, auto "
              "= rma where the provider offers it (the transport column says which)"},
             ofi.protocol, protocols);
  set.group("");
}

}  // namespace ccbench
