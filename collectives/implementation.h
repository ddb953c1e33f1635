#pragma once
// An implementation is one named way to perform collectives (nccl, ring, tree, mpi, ...). The
// harness owns buffers, timing and checks; an implementation only moves and reduces data.
//
// Life cycle, every call collective over ctx.comm unless said otherwise:
//   collectives()  the collectives it implements: a fixed set, declared; every other collective is
//                  skipped with that list as the reason (case_unsupported()), never run.
//   refuses()      local and pure, the same answer on every rank, asked before setup(): why it
//                  cannot run in this context at all (NCCL: two ranks of a node on one GPU). Then
//                  setup() is never called and every case is skipped with that reason.
//   unsupported()  local and pure: the same answer on every rank; nullopt means "can run".
//   setup()        connections, communicators. Throws Error(precondition) when it cannot run here.
//   attach()       once per buffer set, before the first run() on it (IPC handles, registration).
//   run()          one collective. CPU: complete on return. GPU: enqueued on ctx.stream with no
//                  host synchronisation, so it can be captured into a CUDA graph.
//   run_aggregated()  `n` of the same collective back to back, as run() (nccl-tests' -m).
//   check_async_errors()  after each host synchronisation.
//   probe_begin(), describe()  around the first warm-up call of each measurement (and around
//                  a CUDA-graph capture): what the implementation chose for that size.
//   detach()       before the buffers are freed.
// Errors are thrown as ccbench::Error with the exit code they map to.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "collectives/impl_id.h"
#include "collectives/nccl/nccl_config.h"
#include "collectives/schedules/tree.h"
#include "collectives/types.h"
#include "topologies/layout.h"
#include "topologies/ring_order.h"

namespace ccbench {

enum class Device { cpu, gpu };
std::string_view name(Device d);
std::string_view name(schedule::TreeShape s);  // "binary" or "double", as --tree takes them

// Where an implementation runs. Owned by the harness; valid from setup() to destruction.
struct ImplContext {
  MPI_Comm comm = MPI_COMM_NULL;  // the ranks taking part
  const RankLayout* layout = nullptr;
  Device device = Device::cpu;
  std::string transport = "auto";  // what the user asked for (--transport)
  // GPU: why ib cannot carry data between every pair of ranks (agreed over the ranks), or nullopt
  // when it can; auto then takes ib across nodes (transports/gpu/gpu_paths.h).
  std::optional<std::string> ib_unavailable = std::string("ib was not probed for this run");
  int cuda_device = -1;                                        // GPU ordinal of this rank
  void* stream = nullptr;                                      // cudaStream_t of this rank (GPU)
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};  // bound of every wait
  RingOrderChoice ring_order;  // --ring-order: ring implementations build their ring with ring_order()
  schedule::TreeShape tree = schedule::TreeShape::double_binary;  // --tree: the all-reduce trees of `tree`
  // GPU: the SMs a collective's grid may hold; 0 = every SM. --overlap leaves the collectives
  // this many SMs beside its load (harness/overlap/overlap.h): a grid larger than that would wait for the
  // load's blocks to retire.
  int collective_sms = 0;
};

// What one measurement asks for.
struct CaseSpec {
  Collective coll = Collective::allreduce;
  DataType dtype = DataType::float32;
  ReduceOp op = ReduceOp::sum;  // ReduceOp::none for data movement collectives
  int root = 0;                 // broadcast
};

struct CallArgs {
  CaseSpec spec;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;  // as CollectiveShape::count
};

// The buffers of one measurement series: every send/recv pointer given to run() lies inside.
struct BufferSet {
  void* send = nullptr;
  size_t send_bytes = 0;
  void* recv = nullptr;
  size_t recv_bytes = 0;
  Collective coll = Collective::allreduce;  // the series' collective: every call until detach() runs it
};

// A rank's neighbours on a ring: the rank it receives from and the rank it sends to.
struct RingNeighbours {
  int prev = -1, next = -1;
};

// Memory with special needs (ncclMemAlloc for symmetric windows); the harness uses its own
// allocator when an implementation has none.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t bytes) = 0;  // throws Error(precondition) when out of memory
  virtual void release(void* p) = 0;
};

class Implementation {
 public:
  virtual ~Implementation() = default;
  virtual CollectiveSet collectives() const = 0;
  virtual std::optional<std::string> refuses(const ImplContext&) const { return std::nullopt; }
  virtual std::optional<std::string> unsupported(const CaseSpec& spec, const ImplContext& ctx) const = 0;
  // Like unsupported(), for one size (`count` as in CallArgs): e.g. a one-shot kernel's limit.
  virtual std::optional<std::string> unsupported_count(const CaseSpec&, size_t /*count*/) const { return std::nullopt; }
  virtual void setup(const ImplContext& ctx) = 0;
  virtual Allocator* allocator() { return nullptr; }
  virtual void attach(const BufferSet&) {}
  virtual void run(const CallArgs& args) = 0;
  // n >= 1 calls of run(args) in a row; an implementation with a grouping API issues them as one
  // group (NCCL: inside ncclGroupStart/ncclGroupEnd, as nccl-tests' -m does).
  virtual void run_aggregated(const CallArgs& args, int n) {
    for (int i = 0; i < n; ++i) run(args);
  }
  virtual void detach() {}
  // Called after the harness synchronised with the device: throws the error a kernel or NCCL
  // reported asynchronously (a device-side wait that timed out: Error(timeout)).
  virtual void check_async_errors() {}
  // Transport label for the results ("shm", "mpi", "shm+mpi", "p2p", "host", "p2p+net/tcp", "nccl:SHM" ...;
  // is_transport_label in transports/labels.h says which labels are valid).
  virtual std::string transport() const = 0;
  // Whether run() may be captured into a CUDA graph (GPU implementations).
  virtual bool graph_capturable() const { return false; }
  // The results' `algorithm` column: what the calls made since probe_begin() used ("RING/LL 2ch"
  // as NCCL's profiler reported it, the kernel `best` picked). describe() is called after the
  // host synchronised with those calls, on every rank; "" when not known.
  virtual void probe_begin() {}
  virtual std::string describe(const CallArgs&) { return {}; }
  // The neighbours of this rank on the ring that setup() connected (ring implementations; nullopt
  // for the others, or when setup() connected none): what the ring really is, for run.json's
  // context ("ring_neighbours"), whatever --ring-order asked for.
  virtual std::optional<RingNeighbours> ring_neighbours() const { return std::nullopt; }
  // Called from the watchdog thread when a deadline expired, possibly while the main thread is
  // blocked inside this implementation: releases what it waits on (NCCL: ncclCommAbort). The
  // process ends right after. Returns what was done, "" for nothing.
  virtual std::string abort_from_watchdog() { return {}; }
};

// Why `impl` (named `impl_name`) cannot run `spec` here: a collective it does not declare (the
// reason lists those it does), else its own unsupported(). What the harness asks before a case.
std::optional<std::string> case_unsupported(const Implementation& impl, std::string_view impl_name,
                                            const CaseSpec& spec, const ImplContext& ctx);
// The first half of case_unsupported(): the reason when `c` is not among impl.collectives().
std::optional<std::string> undeclared_collective(const Implementation& impl, std::string_view impl_name, Collective c);

// A named implementation for one kind of rank: one row of the support matrix
// (collectives/implementations.def). An id can exist for both kinds ("ring" is a CPU executor on
// CPU ranks and a CUDA kernel on GPU ranks).
struct ImplInfo {
  enum class Needs { always, mpi, cuda, nccl };  // what it is built on (implementations.def)
  ImplId id;
  std::string name;  // name(id): the rows' impl column
  Device device;
  std::string summary;
  std::function<std::unique_ptr<Implementation>()> make;  // empty when not built in
  std::string missing;                                    // why it is not built in
  // The setting this instance runs with (--nccl-config: "maxCTAs=4;NCCL_ALGO=Ring"), the rows'
  // nccl_config column; "" for the implementation as registered.
  std::string setting = "";
  // Among what a run takes without --impl (or with --impl default) on its device.
  bool by_default = false;
  Needs needs = Needs::always;
  // The performance model's schedules that predict it (harness/model/run_model.h): none, one, or
  // several of which the fastest is its prediction (NCCL's tuner picks between ring and tree).
  std::vector<ModelSchedule> model;
};

std::string_view name(ImplInfo::Needs n);  // always, mpi, cuda, nccl: as the .def spells them

// Every implementation ccbench knows, in the order reports list them; those left out of this
// build have no `make` and say why.
const std::vector<ImplInfo>& implementations();
const ImplInfo* find_implementation(ImplId id, Device device);  // nullptr if none
// Whether `id` is one of NCCL's (--nccl-config, -R 2 and the NCCL library apply to it).
bool is_nccl(ImplId id);
// `info` once per configuration of --nccl-config (nccl_config.h): same name, its setting the
// configuration's label, each its own NCCL communicator. Empty for every implementation but
// NCCL's (and without NCCL built in).
std::vector<ImplInfo> nccl_config_variants(const ImplInfo& info, const std::vector<NcclConfig>& configs);
// Reads the tuning variables of every implementation built in (CCBENCH_CPU_SLOT_*, CCBENCH_GPU_*,
// ...) and throws Error(usage) naming a bad one, or a set variable one slip from a knob
// (core/knobs.h: misspelt_knob): called before MPI start-up.
void check_tuning_environment();

}  // namespace ccbench
