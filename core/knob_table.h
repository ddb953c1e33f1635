#pragma once
// Every CCBENCH_* environment variable ccbench reads, in one table: its name, what it takes, its
// default, who must agree on it, what it does and the measurement (or reason) that chose the
// default. core/knobs.h reads the environment through it (so a name, a range and a default are
// spelled here only), tuning_settings() takes its set from the scope column, and
// `ccbench help --markdown` prints it into docs/reference.md ("Environment variables").
//
// Why one table in core rather than rows registered by each layer: the table is data, and core
// is the only place every layer, the reference and the unit tests all reach; rows registered
// from upper layers' static objects would be dropped by the linker from static libraries that
// nothing else references, and the table would then depend on what a binary links. The layers
// that own a knob's meaning keep their constants (kMaxChannels, HostCopy) and check at compile
// time that the table agrees with them (static_assert beside the reader).
//
// Measurements are evidence entries (docs/evidence/INDEX.md); the GPU ones are on 2 x H200
// (NV18), busbw of float sum out of place.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>

namespace ccbench {

// In the table's order (checked at compile time in core/knobs.cpp).
enum class Knob : std::uint8_t {
  cpu_slot_bytes,
  cpu_slot_depth,
  gpu_slot_bytes,
  gpu_channels,
  gpu_tree_channels,
  gpu_twoshot_blocks,
  gpu_host_channels,
  gpu_host_recv,
  gpu_host_send,
  gpu_host_ce_min_bytes,
  gpu_net_channels,
  gpu_net_slot_bytes,
  gpu_net_threads,
  oneshot_max_bytes,
  best_oneshot_max_bytes,
  best_twoshot_max_bytes,
  best_bruck_max_bytes,
  best_ring_allgather_max_bytes,
  hostid,
  tcp_if,
  fault,
  db,
  data_dir,
  nccl_library,
  cublas_library,
  telemetry_nvml_replay,
  telemetry_ib_dir,
};

enum class KnobKind {
  size,     // bytes with the suffixes of core/size.h ("256K"): lo <= value <= hi, value % multiple == 0
  integer,  // a whole decimal number, lo <= value <= hi
  choice,   // one of `words`, exactly as spelled; the value is the word's index
  text,     // any text, read as given
};

enum class KnobScope {
  run,      // every rank of a run must have the same value (harness/job/bootstrap.h: check_same_tuning):
            // it sizes buffers, channels and blocks that peers lay out alike or address in each other
  process,  // each process its own (a rank's node id, interface, files)
};

struct KnobRow {
  Knob id;
  std::string_view name;
  KnobKind kind;
  KnobScope scope;
  std::uint64_t lo = 0;  // size, integer
  std::uint64_t hi = UINT64_MAX;
  std::uint64_t multiple = 1;
  std::span<const std::string_view> words = {};  // choice
  std::uint64_t value = 0;                       // the default: size, integer; choice: the word's index
  std::string_view text = {};                    // text: the default where it is fixed, else empty
  std::string_view form = {};                    // text: what it takes ("an interface name")
  // Set: the upper bound and the default are that knob's value, not hi and value.
  std::optional<Knob> at_most = std::nullopt;
  std::string_view unset = {};  // what unset means, where the default value alone does not say it
  std::string_view what;        // what it sets
  std::string_view chosen_by;   // the measurement (evidence id) or the reason behind the default and range
};

// In HostCopy's order (transports/gpu/host_copy.h checks it).
inline constexpr std::string_view kHostCopyWords[] = {"sm", "ce"};

inline constexpr KnobRow kKnobTable[] = {
    {.id = Knob::cpu_slot_bytes,
     .name = "CCBENCH_CPU_SLOT_BYTES",
     .kind = KnobKind::size,
     .scope = KnobScope::run,
     .lo = 64,
     .hi = 64ull << 20,
     .multiple = 64,
     .value = 256ull << 10,
     .what = "slot size of the CPU channels (shm, tcp, ib, ofi) of the CPU ring and tree",
     .chosen_by = "cpu2core-20261130-np2: 64K-1M x 2-8 deep, none better than 256K x 4 beyond the noise. Whole "
                  "64-byte cache lines (the executors copy and reduce by lines); 64 MiB is far past the settings "
                  "measured and bounds the memory a typo can take"},
    {.id = Knob::cpu_slot_depth,
     .name = "CCBENCH_CPU_SLOT_DEPTH",
     .kind = KnobKind::integer,
     .scope = KnobScope::run,
     .lo = 2,
     .hi = 64,
     .value = 4,
     .what = "slots in flight per CPU channel",
     .chosen_by = "cpu2core-20261130-np2 (with the slot size). At least 2: a fused ring step holds a received slot "
                  "while it waits for a free one to send into; 64 bounds the memory a typo can take"},
    {.id = Knob::gpu_slot_bytes,
     .name = "CCBENCH_GPU_SLOT_BYTES",
     .kind = KnobKind::size,
     .scope = KnobScope::run,
     .lo = 4ull << 10,
     .hi = 16ull << 20,
     .multiple = 4ull << 10,
     .value = 1ull << 20,
     .what = "FIFO slot of our GPU kernels (ring, tree; over p2p and host)",
     .chosen_by = "h200x2-20261130-sweep-32f952a: a 64-channel ring all-reduce reached 355 GB/s with 1 MiB slots "
                  "against 350 with 256 KiB (and 48 channels x 512 KiB 340). Whole 4 KiB pages; 16 MiB: no "
                  "measurement, it bounds the FIFO memory"},
    {.id = Knob::gpu_channels,
     .name = "CCBENCH_GPU_CHANNELS",
     .kind = KnobKind::integer,
     .scope = KnobScope::run,
     .lo = 1,
     .hi = 128,
     .value = 128,
     .what = "ring blocks (channels) over p2p; small messages use one per 128 KiB",
     .chosen_by = "h200x2-20261130-sweep-cc01c2c: 366 GB/s at 4 GiB against 359 with 96 and 347 with 64 (1 MiB "
                  "slots). At most the kernels' kMaxChannels"},
    {.id = Knob::gpu_tree_channels,
     .name = "CCBENCH_GPU_TREE_CHANNELS",
     .kind = KnobKind::integer,
     .scope = KnobScope::run,
     .lo = 1,
     .hi = 32,
     .value = 32,
     .what = "tree channels per tree and role (4 x this many blocks)",
     .chosen_by = "h200x2-20261130-tree-channels: 340 GB/s at 256 MiB against 303 with 16"},
    {.id = Knob::gpu_twoshot_blocks,
     .name = "CCBENCH_GPU_TWOSHOT_BLOCKS",
     .kind = KnobKind::integer,
     .scope = KnobScope::run,
     .lo = 1,
     .hi = 128,
     .value = 128,
     .what = "two-shot blocks (each handles at least 64 KiB of its rank's chunk)",
     .chosen_by = "h200x2-20261130-sweep-cc01c2c: 340 GB/s at 256 MiB against 330 with 64 and 307 with 32 (more "
                  "reads of the peer's input in flight). At most the kernels' kMaxChannels"},
    {.id = Knob::gpu_host_channels,
     .name = "CCBENCH_GPU_HOST_CHANNELS",
     .kind = KnobKind::integer,
     .scope = KnobScope::run,
     .lo = 1,
     .hi = 128,
     .value = 32,
     .what = "ring blocks over host",
     .chosen_by = "h200x2-20261130-r3: with the SMs moving both halves, 16 / 32 / 64 channels gave 33.0 / 34.2 / "
                  "30.8 GB/s at 256 MiB (32 channels: h200x2-20261130-r1); 32 keeps 32 x 4 slots x 1 MiB = 128 MiB "
                  "of pinned FIFO per rank"},
    {.id = Knob::gpu_host_recv,
     .name = "CCBENCH_GPU_HOST_RECV",
     .kind = KnobKind::choice,
     .scope = KnobScope::run,
     .words = kHostCopyWords,
     .value = 0,
     .unset = "sm, or the ring picks per call where CCBENCH_GPU_HOST_SEND is unset too",
     .what = "who moves the receiving half of a host connection, for every size: the SMs or the copy engines "
             "through a CPU proxy",
     .chosen_by = "h200x2-20261130-r8 (the four combinations), h200x2-20261130-r10"},
    {.id = Knob::gpu_host_send,
     .name = "CCBENCH_GPU_HOST_SEND",
     .kind = KnobKind::choice,
     .scope = KnobScope::run,
     .words = kHostCopyWords,
     .value = 0,
     .unset = "sm, or the ring picks per call where CCBENCH_GPU_HOST_RECV is unset too",
     .what = "who moves the sending half of a host connection, for every size: the SMs or the copy engines "
             "through a CPU proxy",
     .chosen_by = "h200x2-20261130-r8 (the four combinations), h200x2-20261130-r10"},
    {.id = Knob::gpu_host_ce_min_bytes,
     .name = "CCBENCH_GPU_HOST_CE_MIN_BYTES",
     .kind = KnobKind::size,
     .scope = KnobScope::run,
     .value = 32ull << 20,
     .what = "from this call size (a rank's input; all-gather and reduce-scatter: the whole output) the ring over "
             "host uses the copy engines for both halves, below it the SMs",
     .chosen_by = "h200x2-20261130-r8: ring all-reduce busbw sm 31.4 against ce 22.7 GB/s at 16 MiB, 30.9 against "
                  "37.4 at 64 MiB; all-gather 24.5 / 13.2 at 16 MiB, 26.7 / 33.8 at 64 MiB"},
    {.id = Knob::gpu_net_channels,
     .name = "CCBENCH_GPU_NET_CHANNELS",
     .kind = KnobKind::integer,
     .scope = KnobScope::run,
     .lo = 1,
     .hi = 128,
     .value = 8,
     .what = "ring blocks over net, one tcp stream per channel, peer and direction (the tree: a quarter of them "
             "per tree)",
     .chosen_by = "h200x2-20261130-ceilings: TCP over loopback 21.3 GB/s with 4 streams, 34.2 with 8; the sweep of "
                  "h200x2-20261130-r6 (slots 256K-1M x channels 4-16 x threads 4-8 between two emulated nodes): "
                  "512K x 8 x 8 best, 16.7 / 17.1 GB/s at 16 / 128 MiB (one launch each, +-20 % noise). At most "
                  "the kernels' kMaxChannels"},
    {.id = Knob::gpu_net_slot_bytes,
     .name = "CCBENCH_GPU_NET_SLOT_BYTES",
     .kind = KnobKind::size,
     .scope = KnobScope::run,
     .lo = 4ull << 10,
     .hi = 16ull << 20,
     .multiple = 4ull << 10,
     .value = 512ull << 10,
     .what = "FIFO slot over net (the default is cut to CCBENCH_GPU_SLOT_BYTES, a larger value set is refused); only a "
             "step's bytes travel",
     .chosen_by = "the sweep of h200x2-20261130-r6 (see CCBENCH_GPU_NET_CHANNELS)"},
    {.id = Knob::gpu_net_threads,
     .name = "CCBENCH_GPU_NET_THREADS",
     .kind = KnobKind::integer,
     .scope = KnobScope::run,
     .lo = 1,
     .hi = 64,
     .value = 8,
     .what = "proxy I/O threads per rank over net",
     .chosen_by = "h200x2-20261130-ceilings: 6.2 GB/s with one stream and thread, 21.3 with 4; h200x2-20261130-r6: "
                  "with 8 channels, 8 threads carried 14-17 GB/s of ring all-reduce busbw where 4 carried 6-11. "
                  "64: no measurement"},
    {.id = Knob::oneshot_max_bytes,
     .name = "CCBENCH_ONESHOT_MAX_BYTES",
     .kind = KnobKind::size,
     .scope = KnobScope::run,
     .lo = 8,
     .hi = 8ull << 20,
     .multiple = 8,
     .value = 512ull << 10,
     .what = "the largest all-reduce per rank oneshot takes (its LL buffers: 2 x ranks x twice this)",
     .chosen_by = "h200x2-20261130-sweep-cc01c2c: 4.8-5.8 us eager against 10.5-11.9 for nccl at every power of two "
                  "from 8 B to 64 KiB, 2.8-4.1 against 5.9-7.3 with CUDA graphs. Whole 8-byte LL words; 8 MiB: no "
                  "measurement, it bounds the LL buffers"},
    {.id = Knob::best_oneshot_max_bytes,
     .name = "CCBENCH_BEST_ONESHOT_MAX_BYTES",
     .kind = KnobKind::size,
     .scope = KnobScope::run,
     .at_most = Knob::oneshot_max_bytes,
     .what = "best all-reduce: oneshot up to here",
     .chosen_by = "h200x2-20261130-sweep-cc01c2c (as CCBENCH_ONESHOT_MAX_BYTES)"},
    {.id = Knob::best_twoshot_max_bytes,
     .name = "CCBENCH_BEST_TWOSHOT_MAX_BYTES",
     .kind = KnobKind::size,
     .scope = KnobScope::run,
     .hi = 1ull << 40,
     .value = 64ull << 20,
     .what = "best all-reduce: twoshot up to here, ring above",
     .chosen_by = "h200x2-20261130-sweep-cc01c2c: two-shot leads up to 64 MiB (291 against 274 GB/s at 16 MiB, 326 "
                  "against 325 at 64 MiB), the two meet at 128-256 MiB, the ring leads from 512 MiB (352 against "
                  "343; 366 against 345 at 4 GiB)"},
    {.id = Knob::best_bruck_max_bytes,
     .name = "CCBENCH_BEST_BRUCK_MAX_BYTES",
     .kind = KnobKind::size,
     .scope = KnobScope::run,
     .hi = 1ull << 40,
     .value = 2ull << 20,
     .what = "best all-gather: Bruck while a rank's piece is at most this",
     .chosen_by = "h200x2-20261130-sweep-cc01c2c, 2 ranks: Bruck 139 against ring 132 GB/s at 4 MiB output, ring "
                  "192 against Bruck 189 at 8 MiB"},
    {.id = Knob::best_ring_allgather_max_bytes,
     .name = "CCBENCH_BEST_RING_ALLGATHER_MAX_BYTES",
     .kind = KnobKind::size,
     .scope = KnobScope::run,
     .hi = 1ull << 40,
     .value = 16ull << 20,
     .what = "best all-gather: ring while a rank's piece is at most this, copy engines (ce) above",
     .chosen_by = "h200x2-20261130-sweep-cc01c2c, 2 ranks: ring 241 against Bruck 228 and ce 197 GB/s at 16 MiB "
                  "output, ring 272 against ce 254 at 32 MiB, ce 299 against ring 291 at 64 MiB"},
    {.id = Knob::hostid,
     .name = "CCBENCH_HOSTID",
     .kind = KnobKind::text,
     .scope = KnobScope::process,
     .form = "an id",
     .unset = "the host name (and NCCL_HOSTID ccbench-node-N on emulated nodes)",
     .what = "this rank's node id, as NCCL_HOSTID: ranks with different ids are different nodes even on one host "
             "(docs/guides/emulated-nodes.md)",
     .chosen_by = "no measurement: a node is a host unless told otherwise"},
    {.id = Knob::tcp_if,
     .name = "CCBENCH_TCP_IF",
     .kind = KnobKind::text,
     .scope = KnobScope::process,
     .form = "an interface name",
     .unset = "127.0.0.1 on one host; else the host name's address, or the interface on the route to the peers",
     .what = "the network interface this rank's tcp channels listen on and connect from",
     .chosen_by = "no measurement: the address a host's peers can reach"},
    {.id = Knob::fault,
     .name = "CCBENCH_FAULT",
     .kind = KnobKind::text,
     .scope = KnobScope::process,
     .form = "a fault spec",
     .unset = "no fault",
     .what = "fault injection for tests (docs/reliability.md#fault-injection)",
     .chosen_by = "no measurement"},
    {.id = Knob::db,
     .name = "CCBENCH_DB",
     .kind = KnobKind::text,
     .scope = KnobScope::process,
     .form = "a file or URL",
     .unset = "no history",
     .what = "the history store (an SQLite file or a postgresql:// URL) where --db is not given",
     .chosen_by = "no measurement"},
    {.id = Knob::data_dir,
     .name = "CCBENCH_DATA_DIR",
     .kind = KnobKind::text,
     .scope = KnobScope::process,
     .form = "a folder",
     .unset = "share/ccbench beside the binary, or ../share/ccbench",
     .what = "the folder holding presets/ (the topology presets), in place of share/ccbench",
     .chosen_by = "no measurement: the installed layout"},
    {.id = Knob::nccl_library,
     .name = "CCBENCH_NCCL_LIBRARY",
     .kind = KnobKind::text,
     .scope = KnobScope::process,
     .text = "libnccl.so.2",
     .form = "a library file or soname",
     .what = "the NCCL library loaded at run time where --nccl-library is not given",
     .chosen_by = "no measurement: the dynamic loader's NCCL 2"},
    {.id = Knob::cublas_library,
     .name = "CCBENCH_CUBLAS_LIBRARY",
     .kind = KnobKind::text,
     .scope = KnobScope::process,
     .form = "a library file or soname",
     .unset = "libcublas.so.MAJOR of the cuBLAS ccbench was built against",
     .what = "the cuBLAS library loaded at run time (--overlap gemm)",
     .chosen_by = "no measurement: the cuBLAS of the build"},
    {.id = Knob::telemetry_nvml_replay,
     .name = "CCBENCH_TELEMETRY_NVML_REPLAY",
     .kind = KnobKind::text,
     .scope = KnobScope::process,
     .form = "a file",
     .unset = "NVML itself",
     .what = "a file of recorded NVML answers read in place of NVML, for tests (docs/guides/telemetry.md)",
     .chosen_by = "no measurement"},
    {.id = Knob::telemetry_ib_dir,
     .name = "CCBENCH_TELEMETRY_IB_DIR",
     .kind = KnobKind::text,
     .scope = KnobScope::process,
     .text = "/sys/class/infiniband",
     .form = "a folder",
     .what = "where the NIC counters are read, for tests (docs/guides/telemetry.md)",
     .chosen_by = "no measurement: the kernel's sysfs"},
};

static_assert(std::size(kKnobTable) == static_cast<std::size_t>(Knob::telemetry_ib_dir) + 1, "a row per Knob");

constexpr const KnobRow& knob_row(Knob k) { return kKnobTable[static_cast<std::size_t>(k)]; }

// The fixed default of a size or integer knob, as the type its reader uses (kernel constants,
// member initialisers); not for knobs bounded by another (at_most).
template <class T>
constexpr T knob_default(Knob k) {
  return static_cast<T>(knob_row(k).value);
}

}  // namespace ccbench
