#include "harness/links_cli.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "harness/sizes.h"
#include "core/error.h"

namespace ccbench {

namespace {

const std::vector<std::string> kLinkTransports = {"auto", "shm", "mpi", "tcp", "ib", "ce", "sm", "pcie"};

long long whole_number(const std::string& text, const char* flag, long long lo, long long hi, const char* meaning) {
  long long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    fail(ExitCode::usage, "{}: '{}' is not valid; expected {} (a whole number from {} to {})", flag, text, meaning, lo,
         hi);
  return v;
}

double real_number(const std::string& text, const char* flag, double lo, double hi, const char* meaning) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v < lo || v > hi)
    fail(ExitCode::usage, "{}: '{}' is not valid; expected {} (from {} to {})", flag, text, meaning, lo, hi);
  return v;
}

std::vector<std::string> transports_from(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (std::find(kLinkTransports.begin(), kLinkTransports.end(), item) == kLinkTransports.end())
      fail(ExitCode::usage, "--transport: unknown value '{}' (valid: auto, shm, mpi, tcp, ib on CPU ranks; auto, ce, "
           "sm, pcie on GPU ranks; comma-separated)", item);
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  if (out.empty()) fail(ExitCode::usage, "--transport: empty list (valid: auto, shm, mpi, tcp, ib, ce, sm, pcie)");
  return out;
}

}  // namespace

LinksCommand::LinksCommand(CLI::App& app) {
  sub_ = app.add_subcommand("links", "measure every pair of ranks: bandwidth one way and both ways, latency");
  sub_->add_option("--transport", transport_,
                   "CPU ranks: auto (shm within a node, mpi across), shm, mpi, tcp, ib; GPU ranks: auto (= ce,sm,pcie), "
                   "ce (copy engines), sm (SM stores), pcie (pinned host D2H/H2D); comma-separated [auto]");
  sub_->add_option("-b,--minbytes", minbytes_, "smallest size; the latency size [8]");
  sub_->add_option("-e,--maxbytes", maxbytes_, "largest size [CPU 64M, GPU 256M]");
  sub_->add_option("-f,--stepfactor", factor_, "size step factor [8]");
  sub_->add_option("-n,--iters", iters_, "timed messages per size and pair [20]");
  sub_->add_option("-w,--warmup_iters", warmup_, "warm-up messages per size and pair [3]");
  sub_->add_option("--outlier-threshold", threshold_, "flag pairs below this fraction of the median [0.9]");
  sub_->add_flag("--all-at-once", all_at_once_, "also measure every pair at the same time");
  sub_->add_option("--device", device_, "auto, cpu or gpu [auto: GPUs when present]");
  sub_->add_option("--out", out_, "results folder, or none [./ccbench-results/<UTC time>-<host>]");
  sub_->add_option("--timeout", timeout_, "seconds a set-up step or a wait for a peer may last before the run ends with exit code 5 [120]");
  sub_->add_option("--ib-dev", ib_dev_, "ib: RDMA device and port, NAME[:PORT] [first active port]");
  sub_->add_option("--gid-index", gid_index_, "ib: GID table index [RoCE: a RoCE v2 IPv4 GID; IB: 0]");
  sub_->add_option("--ib-qps", ib_qps_, "ib: RC queue pairs per peer [1]");
  sub_->add_option("--ib-chunk", ib_chunk_, "ib: bytes per RDMA WRITE [1M]");
  sub_->add_option("--ib-mtu", ib_mtu_, "ib: path MTU 256..4096 [the ports' active MTU]");
  sub_->add_option("--ib-tc", ib_tc_, "ib: traffic class (RoCE / GRH) [0]");
  sub_->add_option("--ib-sl", ib_sl_, "ib: service level (InfiniBand) [0]");
}

LinksOptions LinksCommand::finish(const std::string& command_line) const {
  LinksOptions o;
  o.command_line = command_line;
  o.transports = transports_from(transport_);
  o.min_bytes = parse_size(minbytes_, "-b/--minbytes");
  if (!maxbytes_.empty() || sub_->count("--maxbytes")) o.max_bytes = parse_size(maxbytes_, "-e/--maxbytes");
  o.factor = real_number(factor_, "-f/--stepfactor", 1.01, 1024, "a size factor > 1");
  SweepSpec probe{o.min_bytes, o.max_bytes ? o.max_bytes : std::max<std::uint64_t>(o.min_bytes, 256ull << 20), o.factor, 0};
  sweep_sizes(probe);
  o.iterations = static_cast<int>(whole_number(iters_, "-n/--iters", 1, 1000000, "messages per size"));
  o.warmup = static_cast<int>(whole_number(warmup_, "-w/--warmup_iters", 0, 1000000, "warm-up messages"));
  o.outlier_threshold = real_number(threshold_, "--outlier-threshold", 0, 1, "a fraction of the median");
  o.all_at_once = all_at_once_;
  if (device_ == "auto") o.device = DeviceChoice::auto_detect;
  else if (device_ == "cpu") o.device = DeviceChoice::cpu;
  else if (device_ == "gpu") o.device = DeviceChoice::gpu;
  else fail(ExitCode::usage, "--device: unknown value '{}' (valid: auto, cpu, gpu)", device_);
  if (sub_->count("--out") && out_.empty()) fail(ExitCode::usage, "--out: empty path; give a results folder, or none");
  o.no_files = out_ == "none";
  if (!o.no_files) o.out_dir = out_;
  const double timeout = real_number(timeout_, "--timeout", 0.001, 7 * 24 * 3600.0, "seconds");
  o.timeout = std::chrono::milliseconds(static_cast<long long>(timeout * 1000));

  if (!ib_dev_.empty() || sub_->count("--ib-dev")) parse_ib_device(ib_dev_, &o.ib);
  if (!gid_index_.empty()) o.ib.gid_index = static_cast<int>(whole_number(gid_index_, "--gid-index", 0, 255, "a GID index"));
  o.ib.qps_per_peer = static_cast<int>(whole_number(ib_qps_, "--ib-qps", 1, kMaxQpsPerPeer, "queue pairs per peer"));
  o.ib.chunk_bytes = parse_size(ib_chunk_, "--ib-chunk");
  if (!ib_mtu_.empty()) o.ib.mtu = static_cast<int>(whole_number(ib_mtu_, "--ib-mtu", 256, 4096, "256, 512, 1024, 2048 or 4096"));
  o.ib.traffic_class = static_cast<int>(whole_number(ib_tc_, "--ib-tc", 0, 255, "a traffic class"));
  o.ib.service_level = static_cast<int>(whole_number(ib_sl_, "--ib-sl", 0, 15, "a service level"));
  validate_ib_options(o.ib);
  return o;
}

}  // namespace ccbench
