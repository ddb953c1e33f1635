#include "telemetry/counters.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace ccbench::telemetry {

namespace fs = std::filesystem;

namespace {

struct GpuCounter {
  Query query;
  const char* what;
  CounterKind kind;
};
constexpr GpuCounter kLinkCounters[] = {
    {Query::nvlink_crc_flit, "CRC flit errors", CounterKind::nvlink},
    {Query::nvlink_crc_data, "CRC data errors", CounterKind::nvlink},
    {Query::nvlink_replay, "replay errors", CounterKind::nvlink},
    {Query::nvlink_recovery, "recovery errors", CounterKind::nvlink},
};
constexpr GpuCounter kDeviceCounters[] = {
    {Query::pcie_replays, "PCIe replays", CounterKind::pcie_replay},
    {Query::ecc_corrected, "corrected ECC errors", CounterKind::ecc_corrected},
    {Query::ecc_uncorrected, "uncorrected ECC errors", CounterKind::ecc_uncorrected},
    {Query::xid_events, "critical XID events", CounterKind::xid},
};

Reading from_answer(std::string where, const char* what, CounterKind kind, const Answer& a, const std::string& device) {
  return {std::move(where), what, kind, a.value, a.why_not, device};
}

// One sysfs counter file: a decimal number and a newline.
Reading read_sysfs_counter(const fs::path& file, std::string where, const char* name, CounterKind kind) {
  Reading r{where, name, kind, std::nullopt, {}, where};
  std::ifstream in(file);
  if (!in) {
    r.why_not = fmt::format("{} cannot be read", file.string());
    return r;
  }
  std::string text;
  std::getline(in, text);
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    r.why_not = fmt::format("{} holds '{}', not a number", file.string(), text);
  else r.value = v;
  return r;
}

std::vector<std::string> sorted_entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

CounterPlan plan_counters(GpuSource& source, const std::string& nic_dir) {
  CounterPlan plan;
  const std::vector<GpuInfo> gpus = source.gpus();
  for (unsigned i = 0; i < gpus.size(); ++i) {
    CounterPlan::Gpu g{i, fmt::format("GPU {} ({})", gpus[i].index, gpus[i].name), {}};
    for (unsigned l = 0; l < kMaxNvLinks; ++l)
      if (source.read(i, Query::nvlink_active, l).value.value_or(0) == 1) g.links.push_back(l);
    plan.gpus.push_back(std::move(g));
  }
  plan.nic_dir = nic_dir;
  std::error_code ec;
  if (!fs::is_directory(nic_dir, ec)) {
    plan.nic_unavailable = fmt::format("{} does not exist (no RDMA NIC driver loaded)", nic_dir);
    return plan;
  }
  for (const std::string& dev : sorted_entries(nic_dir))
    for (const std::string& port : sorted_entries(fs::path(nic_dir) / dev / "ports"))
      plan.nic_ports.push_back(dev + "/" + port);
  if (plan.nic_ports.empty()) plan.nic_unavailable = fmt::format("{} lists no NIC port", nic_dir);
  return plan;
}

Snapshot read_counters(GpuSource& source, const CounterPlan& plan) {
  Snapshot s;
  for (const CounterPlan::Gpu& g : plan.gpus) {
    for (unsigned link : g.links)
      for (const GpuCounter& c : kLinkCounters)
        s.push_back(from_answer(fmt::format("{} NVLink {}", g.label, link), c.what, c.kind,
                                source.read(g.position, c.query, link), g.label));
    for (const GpuCounter& c : kDeviceCounters)
      s.push_back(from_answer(g.label, c.what, c.kind, source.read(g.position, c.query), g.label));
  }
  for (const std::string& port : plan.nic_ports) {
    const auto slash = port.find('/');
    const std::string where = fmt::format("NIC {} port {}", port.substr(0, slash), port.substr(slash + 1));
    const fs::path dir = fs::path(plan.nic_dir) / port.substr(0, slash) / "ports" / port.substr(slash + 1) / "counters";
    for (const char* name : kNicErrorCounters)
      s.push_back(read_sysfs_counter(dir / name, where, name, CounterKind::nic_error));
    for (const char* name : kNicTrafficCounters)
      s.push_back(read_sysfs_counter(dir / name, where, name, CounterKind::nic_traffic));
  }
  return s;
}

std::vector<Delta> counter_deltas(const Snapshot& before, const Snapshot& after) {
  std::vector<Delta> out;
  for (size_t i = 0; i < after.size(); ++i) {
    const Reading& a = after[i];
    Delta d{a.where, a.what, a.kind, std::nullopt, {}, a.device};
    // Snapshots of one plan list the same counters in the same order: look there first.
    const Reading* b = nullptr;
    if (i < before.size() && before[i].where == a.where && before[i].what == a.what) b = &before[i];
    for (size_t j = 0; !b && j < before.size(); ++j)
      if (before[j].where == a.where && before[j].what == a.what) b = &before[j];
    if (!b) d.why_not = "not read before";
    else if (!b->value) d.why_not = b->why_not;
    else if (!a.value) d.why_not = a.why_not;
    else if (*a.value < *b->value)
      d.why_not = fmt::format("went backwards from {} to {} (reset or wrapped)", *b->value, *a.value);
    else d.growth = *a.value - *b->value;
    out.push_back(std::move(d));
  }
  return out;
}

void add_deltas(RowHealth& h, const std::vector<Delta>& deltas) {
  for (const Delta& d : deltas) {
    if (!d.growth) continue;
    std::optional<std::uint64_t>* figure = nullptr;
    switch (d.kind) {
      case CounterKind::nvlink: figure = &h.nvlink_errors; break;
      case CounterKind::pcie_replay: figure = &h.pcie_replays; break;
      case CounterKind::ecc_corrected: figure = &h.ecc_corrected; break;
      case CounterKind::ecc_uncorrected: figure = &h.ecc_uncorrected; break;
      case CounterKind::xid: figure = &h.xid_events; break;
      case CounterKind::nic_error: figure = &h.nic_errors; break;
      case CounterKind::nic_traffic: break;
    }
    if (figure) *figure = figure->value_or(0) + *d.growth;
  }
}

}  // namespace ccbench::telemetry
