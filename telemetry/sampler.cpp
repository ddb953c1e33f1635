#include "telemetry/sampler.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "core/knobs.h"
#include "telemetry/counter_watch.h"
#include "telemetry/counters.h"
#include "telemetry/nvml_source.h"
#include "telemetry/recorded_source.h"

namespace ccbench::telemetry {

namespace {

using Clock = std::chrono::steady_clock;

// What the background thread reads of every GPU, in this order.
constexpr Query kSampled[] = {Query::temperature_c, Query::power_mw,      Query::power_limit_mw,
                              Query::sm_clock_mhz,  Query::mem_clock_mhz, Query::throttle_reasons,
                              Query::gpu_util_pct,  Query::mem_util_pct};
constexpr size_t kSampledCount = std::size(kSampled);
enum SampledIndex { kTemp, kPower, kPowerLimit, kSmClock, kMemClock, kThrottle, kGpuUtil, kMemUtil };

struct GpuSample {
  double t_s = 0;            // seconds since the sampler started (steady clock)
  std::int64_t unix_ms = 0;  // wall clock, to line nodes up
  unsigned gpu = 0;          // position in GpuSource::gpus()
  std::array<std::optional<std::uint64_t>, kSampledCount> v;
};

std::optional<std::uint64_t> relevant_throttle(const GpuSample& s) {
  if (!s.v[kThrottle]) return std::nullopt;
  return health_relevant_throttle(*s.v[kThrottle]);
}

template <typename T>
Json or_null(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json sample_json(const GpuSample& s, const std::string& host, unsigned nvml_index) {
  auto watts = [](const std::optional<std::uint64_t>& mw) {
    return mw ? Json(static_cast<double>(*mw) / 1000.0) : Json(nullptr);
  };
  return {{"type", "sample"},
          {"host", host},
          {"t_s", s.t_s},
          {"unix_ms", s.unix_ms},
          {"gpu", nvml_index},
          {"temp_c", or_null(s.v[kTemp])},
          {"power_w", watts(s.v[kPower])},
          {"power_limit_w", watts(s.v[kPowerLimit])},
          {"sm_clock_mhz", or_null(s.v[kSmClock])},
          {"mem_clock_mhz", or_null(s.v[kMemClock])},
          {"throttle", s.v[kThrottle] ? Json(throttle_names(*s.v[kThrottle])) : Json(nullptr)},
          {"gpu_util_pct", or_null(s.v[kGpuUtil])},
          {"mem_util_pct", or_null(s.v[kMemUtil])}};
}

// The RowHealth figures that counter growth adds to (counters.h).
constexpr std::optional<std::uint64_t> RowHealth::*kCounterFigures[] = {
    &RowHealth::nvlink_errors,   &RowHealth::pcie_replays, &RowHealth::ecc_corrected,
    &RowHealth::ecc_uncorrected, &RowHealth::xid_events,   &RowHealth::nic_errors};

// A node's figures over a row (or a run): RowHealth plus what a mean over nodes needs.
struct Figures {
  RowHealth h;
  double power_sum_w = 0;
  std::uint64_t power_samples = 0;

  void add_sample(const GpuSample& s) {
    if (s.v[kTemp]) h.temp_max_c = std::max(h.temp_max_c.value_or(0.0), static_cast<double>(*s.v[kTemp]));
    if (s.v[kSmClock])
      h.sm_clock_min_mhz = std::min(h.sm_clock_min_mhz.value_or(1e300), static_cast<double>(*s.v[kSmClock]));
    if (auto t = relevant_throttle(s)) h.throttle = h.throttle.value_or(0) | *t;
    if (s.v[kPower]) {
      power_sum_w += static_cast<double>(*s.v[kPower]) / 1000.0;
      ++power_samples;
      h.power_mean_w = power_sum_w / static_cast<double>(power_samples);
    }
  }

  void merge(const Figures& o) {
    auto keep = [](auto& into, const auto& from, auto pick) {
      if (from) into = into ? pick(*into, *from) : *from;
    };
    auto max = [](auto a, auto b) { return std::max(a, b); };
    auto min = [](auto a, auto b) { return std::min(a, b); };
    auto sum = [](auto a, auto b) { return a + b; };
    keep(h.temp_max_c, o.h.temp_max_c, max);
    keep(h.sm_clock_min_mhz, o.h.sm_clock_min_mhz, min);
    keep(h.throttle, o.h.throttle, [](auto a, auto b) { return a | b; });
    for (auto m : kCounterFigures) keep(h.*m, o.h.*m, sum);
    power_sum_w += o.power_sum_w;
    power_samples += o.power_samples;
    if (power_samples) h.power_mean_w = power_sum_w / static_cast<double>(power_samples);
  }

  // The same without counter growth: a run's counters come from its first and last reads.
  Figures samples_only() const {
    Figures f = *this;
    for (auto m : kCounterFigures) f.h.*m = std::nullopt;
    return f;
  }

  Json to_json() const {
    Json j = Json::object();
    for (size_t i = 0; i < health_columns().size(); ++i) j[health_columns()[i].key] = health_value(h, i);
    j["power_sum_w"] = power_sum_w;
    j["power_samples"] = power_samples;
    return j;
  }
  static Figures from_json(const Json& j) {
    Figures f;
    for (size_t i = 0; i < health_columns().size(); ++i) set_health_value(f.h, i, j.at(health_columns()[i].key));
    f.power_sum_w = j.at("power_sum_w").get<double>();
    f.power_samples = j.at("power_samples").get<std::uint64_t>();
    return f;
  }
};

}  // namespace

bool samples_its_host(int rank, const std::vector<std::string>& host_of) {
  for (int r = 0; r < rank; ++r)
    if (host_of[static_cast<size_t>(r)] == host_of[static_cast<size_t>(rank)]) return false;
  return true;
}

std::unique_ptr<GpuSource> open_gpu_source() {
  const auto replay = env_text(Knob::telemetry_nvml_replay);
  return replay ? replay_answers_file(*replay) : open_nvml();
}

Sources open_sources(const std::string& record_path) {
  Sources s;
  s.gpu = open_gpu_source();
  if (!record_path.empty()) s.gpu = std::make_unique<RecordingSource>(std::move(s.gpu), record_path);
  s.nic_dir = env_text_or_default(Knob::telemetry_ib_dir);
  return s;
}

// ---------------------------------------------------------------------------------------------
// A sampling rank: the sampling thread, the counter watch, the node's row figures and warnings.
// ---------------------------------------------------------------------------------------------
struct Sampler::Node {
  Node(const Options& o, std::string host_name, Sources s)
      : opt(o), host(std::move(host_name)), src(std::move(s)), gpus(src.gpu->gpus()) {
    warned_throttle.assign(gpus.size(), 0);
    warned_hot.assign(gpus.size(), false);
    last_of_gpu.resize(gpus.size());
    for (const GpuSample& g : read_sample(/*keep_reasons=*/true)) pending.push_back(g);
    counters =
        std::make_unique<CounterWatch>(*src.gpu, plan_counters(*src.gpu, src.nic_dir), opt.counter_interval, start);
    row_base = counters->at_start();
    if (!gpus.empty()) thread = std::thread([this] { loop(); });
  }

  ~Node() { stop(false); }

  // Ends both threads; with `final_read` the counters are read once more (the run's end).
  void stop(bool final_read) {
    {
      std::lock_guard lock(mu);
      stopping = true;
    }
    cv.notify_all();
    if (thread.joinable()) thread.join();
    if (counters) counters->stop(final_read);
  }

  double now_s() const { return std::chrono::duration<double>(Clock::now() - start).count(); }

  // One sample of every GPU. `keep_reasons`: remember why a query is not available (first call).
  std::vector<GpuSample> read_sample(bool keep_reasons) {
    std::vector<GpuSample> out;
    const double t = now_s();
    const auto unix_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    for (unsigned g = 0; g < gpus.size(); ++g) {
      GpuSample s{t, unix_ms, g, {}};
      for (size_t i = 0; i < kSampledCount; ++i) {
        Answer a = src.gpu->read(g, kSampled[i]);
        s.v[i] = a.value;
        if (keep_reasons && !a.value) not_available[g][std::string(query_name(kSampled[i]))] = a.why_not;
      }
      out.push_back(s);
    }
    return out;
  }

  void loop() {
    std::unique_lock lock(mu);
    while (!cv.wait_for(lock, opt.interval, [this] { return stopping; })) {
      lock.unlock();  // NVML calls take a while; the main thread may want the samples meanwhile
      std::vector<GpuSample> s = read_sample(false);
      lock.lock();
      pending.insert(pending.end(), s.begin(), s.end());
    }
  }

  std::vector<GpuSample> take() {
    std::lock_guard lock(mu);
    return std::exchange(pending, {});
  }

  Json describe() const {
    Json devices = Json::array();
    for (const CounterPlan::Gpu& g : counters->plan().gpus) {
      const GpuInfo& info = gpus[g.position];
      Json na = Json::object();
      if (auto it = not_available.find(g.position); it != not_available.end())
        for (const auto& [q, why] : it->second) na[q] = why;
      for (const Reading& r : *counters->at_start().snapshot)
        if (!r.value && r.device == g.label) na[r.where + " " + r.what] = r.why_not;
      devices.push_back({{"index", info.index},
                         {"name", info.name},
                         {"uuid", info.uuid},
                         {"nvlinks", g.links},
                         {"not_available", na}});
    }
    const std::string why_gpu = src.gpu->unavailable();
    Json gpu_part = why_gpu.empty()
                        ? Json{{"available", true}, {"driver", src.gpu->driver_version()}, {"devices", devices}}
                        : Json{{"available", false}, {"reason", why_gpu}};
    const CounterPlan& plan = counters->plan();
    Json nic_part = plan.nic_unavailable.empty()
                        ? Json{{"available", true}, {"dir", plan.nic_dir}, {"ports", plan.nic_ports}}
                        : Json{{"available", false}, {"reason", plan.nic_unavailable}};
    return {{"host", host}, {"gpus", gpu_part}, {"nics", nic_part}};
  }

  std::string gpu_label(unsigned g) const {
    return fmt::format("host {} GPU {} ({})", host, gpus[g].index, gpus[g].name);
  }

  // Warnings about samples of this row: each new throttle reason and the first time a GPU
  // reaches the limit (later rows repeat them only in the figures).
  void warn_samples(const std::vector<GpuSample>& window, const std::string& label, Json& warnings) {
    for (const GpuSample& s : window) {
      if (auto t = relevant_throttle(s); t && (*t & ~warned_throttle[s.gpu])) {
        warnings.push_back(fmt::format("{}: clocks throttled ({}) during {}", gpu_label(s.gpu),
                                       throttle_names(*t & ~warned_throttle[s.gpu]), label));
        warned_throttle[s.gpu] |= *t;
      }
      if (s.v[kTemp] && static_cast<double>(*s.v[kTemp]) >= opt.temp_limit_c && !warned_hot[s.gpu]) {
        warnings.push_back(fmt::format("{}: temperature {} C reached the limit of {:g} C (--temp-limit) during {}",
                                       gpu_label(s.gpu), *s.v[kTemp], opt.temp_limit_c, label));
        warned_hot[s.gpu] = true;
      }
    }
  }

  // The first growth of each error counter in the run (the watch reports each once). `label`:
  // the row now ending, "" at the end of the run.
  void warn_first_growth(const std::vector<FirstGrowth>& first, const std::string& label, Json& warnings) const {
    for (const FirstGrowth& g : first) {
      const std::string when =
          label.empty() ? "at the end of the run" : (g.t_s >= row_start_s ? "during " : "before ") + label;
      warnings.push_back(
          fmt::format("host {} {}: {} grew by {} (found {}; first growth in this run, the total follows at the end)",
                      host, g.delta.where, g.delta.what, *g.delta.growth, when));
    }
  }

  // The series lines of the counter reads that saw growth.
  Json counter_lines(const CounterNews& news) const {
    Json lines = Json::array();
    for (const auto& [t, grown] : news.growth)
      lines.push_back({{"type", "counters"}, {"host", host}, {"t_s", t}, {"grown", grown_json(grown)}});
    return lines;
  }

  // Takes a timestamp and the latest counter read (a pointer copy): nothing slow.
  void begin_row() {
    row_base = counters->latest();
    row_start_s = now_s();
  }

  // The samples that stand for a row ending at `row_end_s`: those taken during it, or for a row
  // shorter than the interval, the latest sample of each GPU.
  std::vector<GpuSample> row_window(const std::vector<GpuSample>& samples, double row_end_s) {
    std::vector<GpuSample> window;
    for (const GpuSample& s : samples)
      if (s.t_s >= row_start_s && s.t_s <= row_end_s) window.push_back(s);
    std::vector<bool> seen(gpus.size(), false);
    for (const GpuSample& s : window) seen[s.gpu] = true;
    for (const GpuSample& s : samples) last_of_gpu[s.gpu] = s;
    for (unsigned g = 0; g < gpus.size(); ++g)
      if (!seen[g] && last_of_gpu[g]) window.push_back(*last_of_gpu[g]);
    return window;
  }

  // The node's message for rank 0: the row's figures (counter growth between the last read
  // before the size began and the last one that ended before it ended; none when no read ended
  // in between), warnings, and the samples and counter reads since the last message.
  Json end_row(const std::string& label) {
    const double row_end_s = now_s();
    const CounterRead last = counters->latest();
    const CounterNews news = counters->take_news();
    const std::vector<GpuSample> samples = take();
    const std::vector<GpuSample> window = row_window(samples, row_end_s);
    Figures f;
    for (const GpuSample& s : window) f.add_sample(s);
    Json grown = Json::array(), counter_window = nullptr;
    if (last.seq != row_base.seq) {
      const std::vector<Delta> deltas = counter_deltas(*row_base.snapshot, *last.snapshot);
      add_deltas(f.h, deltas);
      grown = grown_json(deltas);
      counter_window = Json::array({row_base.t_s, last.t_s});
    }
    Json warnings = Json::array();
    warn_samples(window, label, warnings);
    warn_first_growth(news.first_growth, label, warnings);
    return {{"host", host},
            {"t_s", Json::array({row_start_s, row_end_s})},
            {"figures", f.to_json()},
            {"warnings", warnings},
            {"grown", grown},
            {"counter_window_s", counter_window},
            {"samples", samples_json(samples)},
            {"counters", counter_lines(news)}};
  }

  // The node's last message: the run's counter growth (first read to last, read now), and the
  // samples (one more, read now) and counter reads since the last row.
  Json finish() {
    stop(/*final_read=*/true);
    const std::vector<GpuSample> at_end = read_sample(false);  // the series ends with the run's end
    {
      std::lock_guard lock(mu);
      pending.insert(pending.end(), at_end.begin(), at_end.end());
    }
    const CounterNews news = counters->take_news();
    const CounterRead& first = counters->at_start();
    const CounterRead last = counters->latest();
    const std::vector<Delta> total = counter_deltas(*first.snapshot, *last.snapshot);
    Figures run_counters;
    add_deltas(run_counters.h, total);
    Json warnings = Json::array();
    warn_first_growth(news.first_growth, "", warnings);
    return {{"host", host},
            {"figures", Figures{}.to_json()},
            {"warnings", warnings},
            {"grown", grown_json(total)},
            {"counter_window_s", Json::array({first.t_s, last.t_s})},
            {"samples", samples_json(take())},
            {"counters", counter_lines(news)},
            {"run_counters", run_counters.to_json()},
            {"growth_summary", growth_summary(total)}};
  }

  // "host vm GPU 0 (NVIDIA H200): CRC flit errors +1200 on 18 links, replay errors +3 on 1 link;
  // host vm NIC mlx5_0 port 1: symbol_error +5": the error counters that grew, summed per device
  // and counter; "" when none did.
  std::string growth_summary(const std::vector<Delta>& total) const {
    struct Sum {
      std::string device, what;
      std::uint64_t growth = 0;
      unsigned links = 0;
    };
    std::vector<Sum> sums;  // in the order the counters are read
    for (const Delta& d : total) {
      if (!d.growth || *d.growth == 0 || d.kind == CounterKind::nic_traffic) continue;
      auto it = std::find_if(sums.begin(), sums.end(),
                             [&](const Sum& s) { return s.device == d.device && s.what == d.what; });
      if (it == sums.end()) it = sums.insert(sums.end(), Sum{d.device, d.what});
      it->growth += *d.growth;
      it->links += d.where != d.device;
    }
    std::string text, device;
    for (const Sum& s : sums) {
      text += s.device == device ? ", " : fmt::format("{}host {} {}: ", text.empty() ? "" : "; ", host, s.device);
      device = s.device;
      text += fmt::format("{} +{}", s.what, s.growth);
      if (s.links) text += fmt::format(" on {} link{}", s.links, s.links == 1 ? "" : "s");
    }
    return text;
  }

  Json samples_json(const std::vector<GpuSample>& samples) const {
    Json a = Json::array();
    for (const GpuSample& s : samples) a.push_back(sample_json(s, host, gpus[s.gpu].index));
    return a;
  }

  Options opt;
  std::string host;
  Sources src;
  std::vector<GpuInfo> gpus;
  Clock::time_point start = Clock::now();
  std::map<unsigned, std::map<std::string, std::string>> not_available;  // GPU -> query -> why
  std::unique_ptr<CounterWatch> counters;  // reads src.gpu: declared after it, so destroyed first

  std::mutex mu;  // guards `pending` and `stopping`; never held by the timed loop
  std::condition_variable cv;
  bool stopping = false;
  std::vector<GpuSample> pending;
  std::thread thread;

  CounterRead row_base;  // the latest counter read when the row began
  double row_start_s = 0;
  std::vector<std::optional<GpuSample>> last_of_gpu;
  std::vector<std::uint64_t> warned_throttle;
  std::vector<bool> warned_hot;
};

namespace {

// Whether any node could read a GPU or a NIC port (from the nodes' descriptions).
bool reads_anything(const Json& nodes) {
  for (const Json& n : nodes)
    if ((n["gpus"]["available"] == true && !n["gpus"]["devices"].empty()) || n["nics"]["available"] == true)
      return true;
  return false;
}

// "host a: libnvidia-ml.so.1 not found (no NVIDIA driver); /sys/class/infiniband does not exist (...)".
std::string unavailable_reasons(const Json& nodes) {
  std::string text;
  for (const Json& n : nodes) {
    const std::string gpus = n["gpus"].value("reason", std::string("NVML lists no GPU"));
    text += fmt::format("{}host {}: {}; {}", text.empty() ? "" : "; ", n["host"].get<std::string>(), gpus,
                        n["nics"].value("reason", std::string("?")));
  }
  return text;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Rank 0: merges the nodes' messages, prints warnings, writes the series, keeps the run summary.
// ---------------------------------------------------------------------------------------------
struct Sampler::Root {
  Json context;
  std::string series_path;
  std::ofstream series;
  Figures run;
  Json counters_grown = Json::array();        // the run's growth per counter: {"host", "where", "what", "growth"}
  std::vector<std::string> growth_summaries;  // per node, of the error counters (Node::growth_summary)
  std::uint64_t warnings = 0;

  void write_lines(const Json& lines) {
    if (!series.is_open()) return;
    for (const Json& l : lines) series << l.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
    series.flush();
    if (!series) fail(ExitCode::usage, "cannot write {}", series_path);
  }

  void warn(const std::string& text) {
    fmt::print(stderr, "ccbench: warning: {}\n", text);
    ++warnings;
  }

  // Merges one message per sampling rank (others sent ""); prints their warnings. `label`: the
  // row, "" for the last message of the run.
  Figures merge(const std::vector<std::string>& messages, const std::string& label) {
    Figures row;
    for (const std::string& m : messages) {
      if (m.empty()) continue;
      const Json j = Json::parse(m);
      row.merge(Figures::from_json(j.at("figures")));
      for (const Json& w : j.at("warnings")) warn(w.get<std::string>());
      write_lines(j.at("samples"));
      write_lines(j.at("counters"));
      if (!label.empty())
        write_lines(Json::array({{{"type", "row"},
                                  {"row", label},
                                  {"host", j.at("host")},
                                  {"t_s", j.at("t_s")},
                                  {"figures", j.at("figures")},
                                  {"counter_window_s", j.at("counter_window_s")},
                                  {"counters_grown", j.at("grown")}}}));
      if (j.contains("run_counters")) take_run_counters(j);
    }
    std::fflush(stderr);
    run.merge(row.samples_only());  // counter growth: from the nodes' first and last reads
    return row;
  }

  void take_run_counters(const Json& node) {
    run.merge(Figures::from_json(node.at("run_counters")));
    for (Json g : node.at("grown")) {
      g["host"] = node.at("host");
      counters_grown.push_back(g);
    }
    if (auto s = node.at("growth_summary").get<std::string>(); !s.empty()) growth_summaries.push_back(s);
  }
};

Sampler::Sampler(const Options& options, Role role, Sources sources, Gather gather, std::string series_path)
    : options_(options), role_(std::move(role)), gather_(std::move(gather)) {
  if (role_.root) root_ = std::make_unique<Root>();
  if (!options_.enabled) {
    if (root_) root_->context = {{"enabled", false}};
    return;
  }
  if (role_.samples) node_ = std::make_unique<Node>(options_, role_.host, std::move(sources));
  const auto descriptions = gather_(node_ ? node_->describe().dump() : std::string());
  if (!root_) return;
  Json nodes = Json::array();
  for (const std::string& d : descriptions)
    if (!d.empty()) nodes.push_back(Json::parse(d));
  if (!reads_anything(nodes)) series_path.clear();  // a series of nothing is not worth a file
  root_->series_path = series_path;
  if (!series_path.empty()) {
    root_->series.open(series_path, std::ios::out | std::ios::trunc);
    if (!root_->series) fail(ExitCode::usage, "cannot write {}", series_path);
  }
  const auto slash = series_path.find_last_of('/');
  root_->context = {{"enabled", true},
                    {"interval_ms", options_.interval.count()},
                    {"counter_interval_ms", options_.counter_interval.count()},
                    {"row_counter_window",
                     "from the last counter read before the size began to the last one that "
                     "ended before it ended; none (empty columns) when no read ended in between"},
                    {"temp_limit_c", options_.temp_limit_c},
                    {"sampled_by", "the first rank of each host"},
                    {"benign_throttle_reasons", throttle_names(kBenignThrottle)},
                    {"series_file", series_path.empty() ? Json(nullptr) : Json(series_path.substr(slash + 1))},
                    {"nodes", nodes}};
}

Sampler::~Sampler() = default;

const Json& Sampler::context() const { return root_->context; }

bool Sampler::writes_series() const { return root_ && root_->series.is_open(); }

void Sampler::begin_row() {
  if (options_.enabled && !finished_ && node_) node_->begin_row();
}

RowHealth Sampler::end_row(const std::string& label) {
  if (!options_.enabled || finished_) return {};
  const auto messages =
      gather_(node_ ? node_->end_row(label).dump(-1, ' ', false, Json::error_handler_t::replace) : "");
  return root_ ? root_->merge(messages, label).h : RowHealth{};
}

void Sampler::finish() {
  if (!options_.enabled || finished_) return;
  finished_ = true;
  const auto messages = gather_(node_ ? node_->finish().dump(-1, ' ', false, Json::error_handler_t::replace) : "");
  if (!root_) return;
  root_->merge(messages, "");
  if (!root_->growth_summaries.empty()) {
    std::string all;
    for (const std::string& s : root_->growth_summaries) all += (all.empty() ? "" : "; ") + s;
    root_->warn(fmt::format("error counters grew in this run: {}", all));
    std::fflush(stderr);
  }
  Json line = summary();
  line["type"] = "summary";
  root_->write_lines(Json::array({line}));
  print_health();
}

void Sampler::print_health() const {
  const RowHealth& h = root_->run.h;
  if (!reads_anything(root_->context["nodes"])) {
    fmt::print("# health: not available ({})\n", unavailable_reasons(root_->context["nodes"]));
  } else {
    auto figure = [](const std::optional<double>& v, const char* unit) {
      return v ? fmt::format("{:.0f} {}", *v, unit) : std::string("not available");
    };
    fmt::print("# health: hottest GPU {}, mean power {}, lowest SM clock {}, throttling {}\n",
               figure(h.temp_max_c, "C"), figure(h.power_mean_w, "W"), figure(h.sm_clock_min_mhz, "MHz"),
               h.throttle ? throttle_names(*h.throttle) : std::string("not available"));
    for (const HealthCheck& c : run_checks())
      fmt::print("# health check {}: {} ({})\n", c.name, health_state_name(c.state), c.detail);
  }
  std::fflush(stdout);
}

Json Sampler::summary() const {
  if (!root_ || !finished_) return nullptr;
  Json checks = Json::array();
  for (const HealthCheck& c : run_checks())
    checks.push_back({{"check", c.name}, {"state", health_state_name(c.state)}, {"detail", c.detail}});
  return {{"figures", root_->run.to_json()},
          {"checks", checks},
          {"warnings", root_->warnings},
          {"counters_grown", root_->counters_grown}};
}

const RowHealth& Sampler::run_health() const { return root_->run.h; }

std::vector<HealthCheck> Sampler::run_checks() const { return check_health(root_->run.h, options_.temp_limit_c); }

bool Sampler::fails_health() const {
  if (!options_.enabled || !options_.fail_on_health || !root_) return false;
  for (const HealthCheck& c : run_checks())
    if (c.state == HealthState::fail) return true;
  return false;
}

}  // namespace ccbench::telemetry
