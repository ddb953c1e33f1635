#include "harness/app/links_cli.h"

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
  sub_->add_flag("--overwrite", overwrite_, "replace the links results of an earlier run in --out (refused without it)");
  sub_->add_option("--timeout", timeout_, "seconds a set-up step or a wait for a peer may last before the run ends with exit code 5 [120]");
  ib_.add(*sub_, false);
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
  o.overwrite = overwrite_;
  const double timeout = real_number(timeout_, "--timeout", 0.001, 7 * 24 * 3600.0, "seconds");
  o.timeout = std::chrono::milliseconds(static_cast<long long>(timeout * 1000));

  o.ib = ib_.finish(*sub_);
  return o;
}

void IbFlags::add(CLI::App& app, bool with_gpudirect) {
  app.add_option("--ib-dev", dev_, "ib: RDMA device and port, NAME[:PORT] [first active port]");
  app.add_option("--gid-index", gid_index_, "ib: GID table index [RoCE: a RoCE v2 IPv4 GID; IB: 0]");
  app.add_option("--ib-qps", qps_, "ib: RC queue pairs per peer [1]");
  app.add_option("--ib-chunk", chunk_, "ib: bytes per RDMA WRITE [1M]");
  app.add_option("--ib-mtu", mtu_, "ib: path MTU 256..4096 [the ports' active MTU]");
  app.add_option("--ib-tc", tc_, "ib: traffic class (RoCE / GRH) [0]");
  app.add_option("--ib-sl", sl_, "ib: service level (InfiniBand) [0]");
  if (with_gpudirect)
    app.add_option("--gpudirect", gpudirect_,
                   "ib on GPU ranks: on (FIFO slots in GPU memory, registered through dma-buf, where the GPU "
                   "exports them) or off (staged through pinned host memory) [on]");
}

IbOptions IbFlags::finish(const CLI::App& app) const {
  IbOptions ib;
  if (!dev_.empty() || app.count("--ib-dev")) parse_ib_device(dev_, &ib);
  if (!gid_index_.empty()) ib.gid_index = static_cast<int>(whole_number(gid_index_, "--gid-index", 0, 255, "a GID index"));
  ib.qps_per_peer = static_cast<int>(whole_number(qps_, "--ib-qps", 1, kMaxQpsPerPeer, "queue pairs per peer"));
  ib.chunk_bytes = parse_size(chunk_, "--ib-chunk");
  if (!mtu_.empty()) ib.mtu = static_cast<int>(whole_number(mtu_, "--ib-mtu", 256, 4096, "256, 512, 1024, 2048 or 4096"));
  ib.traffic_class = static_cast<int>(whole_number(tc_, "--ib-tc", 0, 255, "a traffic class"));
  ib.service_level = static_cast<int>(whole_number(sl_, "--ib-sl", 0, 15, "a service level"));
  if (gpudirect_ != "on" && gpudirect_ != "off")
    fail(ExitCode::usage, "--gpudirect: unknown value '{}' (valid: on, off)", gpudirect_);
  ib.gpudirect = gpudirect_ == "on";
  validate_ib_options(ib);
  return ib;
}

}  // namespace ccbench
