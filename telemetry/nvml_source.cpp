#include "telemetry/nvml_source.h"

#include <mutex>

#include <fmt/format.h>

#include "core/nvml_library.h"

namespace ccbench::telemetry {

namespace {

// The few NVML types used, as nvml.h declares them (the header is not needed to build).
using Device = void*;
using EventSet = void*;
struct Utilization {
  unsigned gpu, memory;
};
struct EventData {
  Device device;
  unsigned long long event_type, event_data;
  unsigned gpu_instance, compute_instance;
};
constexpr int kSuccess = kNvmlSuccess, kTimeout = 10;
constexpr int kSensorGpu = 0, kClockSm = 1, kClockMem = 2;
constexpr int kEccCorrected = 0, kEccUncorrected = 1, kEccVolatile = 0;
constexpr int kNvLinkReplay = 0, kNvLinkRecovery = 1, kNvLinkCrcFlit = 2, kNvLinkCrcData = 3;
constexpr unsigned long long kEventXidCritical = 0x8;

class NvmlSource final : public GpuSource {
 public:
  explicit NvmlSource(const std::string& library) : nvml_(library), unavailable_(nvml_.unavailable()) {
    if (!unavailable_.empty()) return;
    driver_ = nvml_.driver_version();
    open_devices();
    open_xid_events();
  }

  ~NvmlSource() override {  // before nvml_ shuts NVML down
    if (events_)
      if (auto free_set = fn<int (*)(EventSet)>("nvmlEventSetFree")) free_set(events_);
  }

  std::string unavailable() const override { return unavailable_; }
  std::string driver_version() const override { return driver_; }
  std::vector<GpuInfo> gpus() const override { return gpus_; }

  Answer read(unsigned gpu, Query q, unsigned link) override {
    if (!unavailable_.empty()) return {std::nullopt, unavailable_};
    if (gpu >= handles_.size()) return {std::nullopt, fmt::format("there is no GPU {}", gpu)};
    Device d = handles_[gpu];
    switch (q) {
      case Query::temperature_c: return get<unsigned>("nvmlDeviceGetTemperature", d, kSensorGpu);
      case Query::power_mw: return get<unsigned>("nvmlDeviceGetPowerUsage", d);
      case Query::power_limit_mw: return get<unsigned>("nvmlDeviceGetEnforcedPowerLimit", d);
      case Query::sm_clock_mhz: return get<unsigned>("nvmlDeviceGetClockInfo", d, kClockSm);
      case Query::mem_clock_mhz: return get<unsigned>("nvmlDeviceGetClockInfo", d, kClockMem);
      case Query::throttle_reasons:
        // Renamed in r535; older drivers only have the first name.
        return fn<int (*)(Device, unsigned long long*)>("nvmlDeviceGetCurrentClocksEventReasons")
                   ? get<unsigned long long>("nvmlDeviceGetCurrentClocksEventReasons", d)
                   : get<unsigned long long>("nvmlDeviceGetCurrentClocksThrottleReasons", d);
      case Query::gpu_util_pct:
      case Query::mem_util_pct: return utilization(d, q == Query::gpu_util_pct);
      case Query::nvlink_active: return get<int>("nvmlDeviceGetNvLinkState", d, link);
      case Query::nvlink_replay: return nvlink_counter(d, link, kNvLinkReplay);
      case Query::nvlink_recovery: return nvlink_counter(d, link, kNvLinkRecovery);
      case Query::nvlink_crc_flit: return nvlink_counter(d, link, kNvLinkCrcFlit);
      case Query::nvlink_crc_data: return nvlink_counter(d, link, kNvLinkCrcData);
      case Query::pcie_replays: return get<unsigned>("nvmlDeviceGetPcieReplayCounter", d);
      case Query::ecc_corrected:
        return get<unsigned long long>("nvmlDeviceGetTotalEccErrors", d, kEccCorrected, kEccVolatile);
      case Query::ecc_uncorrected:
        return get<unsigned long long>("nvmlDeviceGetTotalEccErrors", d, kEccUncorrected, kEccVolatile);
      case Query::xid_events: return xid_count(gpu);
      case Query::energy_mj: return get<unsigned long long>("nvmlDeviceGetTotalEnergyConsumption", d);
    }
    return {std::nullopt, "unknown query"};
  }

 private:
  template <typename F>
  F fn(const char* name) const {
    return nvml_.fn<F>(name);
  }
  std::string error_text(int rc) const { return nvml_.error_text(rc); }

  std::string missing(const char* name) const { return fmt::format("this driver's NVML has no {}", name); }

  // Calls `name(device, args..., T* out)`; the value, or why not.
  template <typename T, typename... Args>
  Answer get(const char* name, Device d, Args... args) const {
    auto f = fn<int (*)(Device, Args..., T*)>(name);
    if (!f) return {std::nullopt, missing(name)};
    T value{};
    if (int rc = f(d, args..., &value); rc != kSuccess)
      return {std::nullopt, fmt::format("{}: {}", name, error_text(rc))};
    return {static_cast<std::uint64_t>(value), {}};
  }

  Answer nvlink_counter(Device d, unsigned link, int counter) const {
    return get<unsigned long long>("nvmlDeviceGetNvLinkErrorCounter", d, link, counter);
  }

  Answer utilization(Device d, bool gpu) const {
    const char* name = "nvmlDeviceGetUtilizationRates";
    auto f = fn<int (*)(Device, Utilization*)>(name);
    if (!f) return {std::nullopt, missing(name)};
    Utilization u{};
    if (int rc = f(d, &u); rc != kSuccess) return {std::nullopt, fmt::format("{}: {}", name, error_text(rc))};
    return {gpu ? u.gpu : u.memory, {}};
  }

  void open_devices() {
    auto count = fn<int (*)(unsigned*)>("nvmlDeviceGetCount_v2");
    auto handle = fn<int (*)(unsigned, Device*)>("nvmlDeviceGetHandleByIndex_v2");
    unsigned n = 0;
    if (!count || !handle || count(&n) != kSuccess) {
      unavailable_ = "NVML cannot count or open the GPUs (nvmlDeviceGetCount_v2 / nvmlDeviceGetHandleByIndex_v2)";
      return;
    }
    auto name = fn<int (*)(Device, char*, unsigned)>("nvmlDeviceGetName");
    auto uuid = fn<int (*)(Device, char*, unsigned)>("nvmlDeviceGetUUID");
    for (unsigned i = 0; i < n; ++i) {
      Device d = nullptr;
      if (handle(i, &d) != kSuccess) continue;
      GpuInfo g{i, "?", ""};
      char buf[96] = {};
      if (name && name(d, buf, sizeof buf) == kSuccess) g.name = buf;
      if (uuid && uuid(d, buf, sizeof buf) == kSuccess) g.uuid = buf;
      handles_.push_back(d);
      gpus_.push_back(g);
    }
    if (gpus_.empty()) unavailable_ = "NVML sees no GPU";
  }

  // Critical XID events arrive in an event set; xid_count() drains it.
  void open_xid_events() {
    auto create = fn<int (*)(EventSet*)>("nvmlEventSetCreate");
    auto reg = fn<int (*)(Device, unsigned long long, EventSet)>("nvmlDeviceRegisterEvents");
    xid_why_not_.assign(handles_.size(), {});
    if (!create || !reg || !fn<int (*)(EventSet, EventData*, unsigned)>("nvmlEventSetWait_v2")) {
      xid_why_not_.assign(handles_.size(), missing("nvmlEventSetCreate/nvmlDeviceRegisterEvents/nvmlEventSetWait_v2"));
      return;
    }
    if (int rc = create(&events_); rc != kSuccess) {
      events_ = nullptr;
      xid_why_not_.assign(handles_.size(), fmt::format("nvmlEventSetCreate: {}", error_text(rc)));
      return;
    }
    xid_counts_.assign(handles_.size(), 0);
    for (size_t i = 0; i < handles_.size(); ++i)
      if (int rc = reg(handles_[i], kEventXidCritical, events_); rc != kSuccess)
        xid_why_not_[i] = fmt::format("nvmlDeviceRegisterEvents(XID): {}", error_text(rc));
  }

  Answer xid_count(unsigned gpu) {
    std::lock_guard lock(xid_mutex_);
    if (!xid_why_not_[gpu].empty()) return {std::nullopt, xid_why_not_[gpu]};
    auto wait = fn<int (*)(EventSet, EventData*, unsigned)>("nvmlEventSetWait_v2");
    for (;;) {
      EventData e{};
      const int rc = wait(events_, &e, 0);
      if (rc == kTimeout) break;
      if (rc != kSuccess) return {std::nullopt, fmt::format("nvmlEventSetWait_v2: {}", error_text(rc))};
      for (size_t i = 0; i < handles_.size(); ++i)
        if (handles_[i] == e.device && (e.event_type & kEventXidCritical)) ++xid_counts_[i];
    }
    return {xid_counts_[gpu], {}};
  }

  NvmlLibrary nvml_;
  std::string unavailable_, driver_;
  std::vector<Device> handles_;
  std::vector<GpuInfo> gpus_;
  EventSet events_ = nullptr;
  std::mutex xid_mutex_;  // the counter thread reads XIDs; the main thread at start
  std::vector<std::uint64_t> xid_counts_;
  std::vector<std::string> xid_why_not_;
};

}  // namespace

std::unique_ptr<GpuSource> open_nvml(const std::string& library) { return std::make_unique<NvmlSource>(library); }

}  // namespace ccbench::telemetry
