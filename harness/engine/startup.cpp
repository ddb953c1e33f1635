#include "harness/engine/startup.h"
#include "core/build_config.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/checks.h"
#include "harness/job/bootstrap.h"
#include "topologies/gpu_discovery.h"
#include "transports/connect.h"

#if CCBENCH_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace ccbench {

namespace {

// Room for a GPU's identity (gpu_identity): a PCI id, or a UUID "GPU-" + 36 characters, and the zero.
constexpr int kGpuIdChars = 48;

// "0-3,8" from a sorted list of numbers.
std::string ranges(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!s.empty()) s += ',';
    s += i == j ? std::to_string(v[i]) : fmt::format("{}-{}", v[i], v[j]);
    i = j + 1;
  }
  return s;
}

// The NUMA node of a CPU core from sysfs (-1 where the kernel does not say).
int numa_of_cpu(int cpu) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(fmt::format("/sys/devices/system/cpu/cpu{}", cpu), ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("node", 0) == 0 && n.size() > 4 && std::isdigit(static_cast<unsigned char>(n[4])))
      return std::stoi(n.substr(4));
  }
  return -1;
}

#if CCBENCH_HAVE_CUDA
// "0000:07:00.0" -> its NUMA node from sysfs (-1 where unknown).
int numa_node_of_pci(std::string pci) {
  for (char& c : pci) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::ifstream f("/sys/bus/pci/devices/" + pci + "/numa_node");
  int node = -1;
  return f >> node && node >= 0 ? node : -1;
}
std::string numa_of_pci(const std::string& pci) {
  const int node = numa_node_of_pci(pci);
  return node < 0 ? "?" : std::to_string(node);
}
#endif

// GPU `cuda_device`'s PCI id ("" without one, or without CUDA).
std::string gpu_pci_id(int cuda_device) {
#if CCBENCH_HAVE_CUDA
  char pci[32] = {};  // room for "00000000:07:00.0" and its terminating zero
  if (cuda_device >= 0 && cudaDeviceGetPCIBusId(pci, sizeof pci, cuda_device) == cudaSuccess) return pci;
#else
  (void)cuda_device;
#endif
  return "";
}

#if CCBENCH_HAVE_CUDA
// The visible CUDA device with identity `id` (gpu_identity: a PCI id or a UUID), or -1.
int device_of_identity(const std::string& id) {
  int dev = -1, count = 0;
  if (id.empty()) return -1;
  if (id.rfind(kGpuUuidPrefix, 0) != 0) {
    if (cudaDeviceGetByPCIBusId(&dev, id.c_str()) == cudaSuccess) return dev;
    cudaGetLastError();
    return -1;
  }
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  for (int d = 0; d < count; ++d)
    if (gpu_uuid(d) == id) return d;
  return -1;
}
#endif

// Whether this process's GPU `cuda_device` can map the memory of the GPU with identity `peer`;
// false where that GPU is not visible here (CUDA_VISIBLE_DEVICES) or without CUDA.
bool can_map_peer(int cuda_device, const std::string& peer) {
#if CCBENCH_HAVE_CUDA
  int ok = 0;
  const int dev = device_of_identity(peer);
  if (cuda_device < 0 || dev < 0) return false;
  if (dev == cuda_device) return true;
  if (cudaDeviceCanAccessPeer(&ok, cuda_device, dev) != cudaSuccess) cudaGetLastError();
  return ok != 0;
#else
  (void)cuda_device, (void)peer;
  return false;
#endif
}

// The NUMA node of GPU `cuda_device` (-1 where unknown or without CUDA).
int numa_of_gpu(int cuda_device) {
#if CCBENCH_HAVE_CUDA
  if (const std::string pci = gpu_pci_id(cuda_device); !pci.empty()) return numa_node_of_pci(pci);
#else
  (void)cuda_device;
#endif
  return -1;
}

std::string gpu_placement(int cuda_device) {
#if CCBENCH_HAVE_CUDA
  const std::string pci = gpu_pci_id(cuda_device);
  cudaDeviceProp p{};
  if (!pci.empty() && cudaGetDeviceProperties(&p, cuda_device) == cudaSuccess)
    return fmt::format("GPU {} [{}] {} NUMA {}", cuda_device, pci, p.name, numa_of_pci(pci));
#endif
  return fmt::format("GPU {}", cuda_device);
}

// What "auto" (or the forced transport) connects this rank with, for our CPU implementations.
std::string cpu_transport(const RankLayout& layout, const std::string& wanted) {
  if (layout.nranks < 2) return "none (one rank)";
  if (wanted != "auto") return wanted;
  std::map<std::string, int> peers;
  for (int peer = 0; peer < layout.nranks; ++peer) {
    if (peer == layout.rank) continue;
    std::string chosen = "none";
    for (const TransportOps& t : cpu_transports()) {
      std::string why;
      if (t.automatic && t.can_connect(layout, layout.rank, peer, &why)) {
        chosen = std::string(t.name);
        break;
      }
    }
    ++peers[chosen];
  }
  std::string s = "auto:";
  for (const auto& [name, n] : peers) s += fmt::format(" {} to {} rank{}", name, n, n == 1 ? "" : "s");
  return s;
}

// The cores this process may run on and their NUMA nodes; false when the kernel does not say.
bool bound_cores(std::vector<int>& cores, std::set<int>& nodes) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) {
      cores.push_back(c);
      if (int n = numa_of_cpu(c); n >= 0) nodes.insert(n);
    }
  return true;
}

}  // namespace

std::vector<int> gather_numa_nodes(MPI_Comm comm, int cuda_device) {
  std::vector<int> cores;
  std::set<int> nodes;
  int mine = cuda_device >= 0                                 ? numa_of_gpu(cuda_device)
             : bound_cores(cores, nodes) && nodes.size() == 1 ? *nodes.begin()
                                                              : -1;
  int size = 1;
  CCB_MPI(MPI_Comm_size(comm, &size));
  std::vector<int> all(static_cast<size_t>(size), -1);
  check_mpi(MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, comm), "MPI_Allgather of NUMA nodes");
  return all;
}

std::string gpu_uuid(int cuda_device) {
#if CCBENCH_HAVE_CUDA
  cudaDeviceProp p{};
  if (cuda_device < 0 || cudaGetDeviceProperties(&p, cuda_device) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  const auto* b = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  std::string s(kGpuUuidPrefix);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += fmt::format("{:02x}", b[i]);
  }
  return s;
#else
  (void)cuda_device;
  return "";
#endif
}

std::string gpu_identity(const std::string& pci_id, const std::string& uuid) { return pci_id.empty() ? uuid : pci_id; }

std::string gather_oversubscription(MPI_Comm comm, const RankLayout& layout) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);  // unknown: counts no thread
  const size_t n = static_cast<size_t>(layout.nranks);
  std::vector<cpu_set_t> all(n);
  check_mpi(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm),
            "MPI_Allgather of CPU affinity");
  std::map<std::string, std::pair<int, cpu_set_t>> hosts;  // host -> ranks, the union of their threads
  for (size_t r = 0; r < n; ++r) {
    auto [it, fresh] = hosts.try_emplace(layout.host_of[r]);
    if (fresh) CPU_ZERO(&it->second.second);
    ++it->second.first;
    CPU_OR(&it->second.second, &it->second.second, &all[r]);
  }
  std::string out;
  for (const auto& [host, use] : hosts) {
    const int threads = CPU_COUNT(&use.second);
    if (threads > 0 && use.first > threads)
      out += fmt::format("{}{} ranks on {} hardware thread{} (host {})", out.empty() ? "" : "; ", use.first, threads,
                         threads == 1 ? "" : "s", host);
  }
  return out;
}

std::vector<std::string> gather_gpu_ids(MPI_Comm comm, int cuda_device) {
  int size = 1;
  CCB_MPI(MPI_Comm_size(comm, &size));
  const size_t n = static_cast<size_t>(size);
  std::array<char, kGpuIdChars> mine{};
  const std::string id = gpu_identity(gpu_pci_id(cuda_device), gpu_uuid(cuda_device));
  std::copy_n(id.begin(), std::min(id.size(), mine.size() - 1), mine.begin());
  std::vector<char> ids(n * kGpuIdChars);
  check_mpi(MPI_Allgather(mine.data(), kGpuIdChars, MPI_CHAR, ids.data(), kGpuIdChars, MPI_CHAR, comm),
            "MPI_Allgather of GPU identities");
  std::vector<std::string> all(n);
  std::vector<size_t> unknown;
  for (size_t r = 0; r < n; ++r) {
    all[r] = std::string(ids.data() + r * kGpuIdChars);
    if (all[r].empty()) unknown.push_back(r);
  }
  // Without an identity a GPU could not be told from another: ranks sharing it would each count it.
  if (!unknown.empty())
    throw Error::agreed(ExitCode::runtime,
                        fmt::format("CUDA gives the GPU of rank{} {} neither a PCI bus id nor a UUID, so ranks sharing "
                                    "a GPU cannot be told apart; check the driver (nvidia-smi -L)",
                                    unknown.size() > 1 ? "s" : "", fmt::join(unknown, ", ")));
  return all;
}

std::vector<std::vector<bool>> gather_gpu_peer_access(MPI_Comm comm, const RankLayout& layout, int cuda_device) {
  const size_t n = static_cast<size_t>(layout.nranks);
  std::vector<char> row(n, 0);  // what this rank's GPU can map (its own, whatever CUDA says of peers)
  const auto me = static_cast<size_t>(layout.rank);
  for (size_t r = 0; r < n; ++r)
    row[r] = layout.host_of[r] == layout.host() && r < layout.gpu_of.size() &&
             (layout.gpu_of[r] == layout.gpu_of[me] || can_map_peer(cuda_device, layout.gpu_of[r]));
  std::vector<char> all(n * n);
  check_mpi(MPI_Allgather(row.data(), static_cast<int>(n), MPI_CHAR, all.data(), static_cast<int>(n), MPI_CHAR, comm),
            "MPI_Allgather of GPU peer access");
  std::vector<std::vector<bool>> access(n, std::vector<bool>(n));
  for (size_t a = 0; a < n; ++a)
    for (size_t b = 0; b < n; ++b) access[a][b] = all[a * n + b] && all[b * n + a];
  return access;
}

std::vector<std::vector<int>> gather_gpu_links(MPI_Comm comm, const RankLayout& layout, int cuda_device) {
  const size_t n = static_cast<size_t>(layout.nranks);
  const std::string id = gpu_pci_id(cuda_device);
  std::vector<std::string> peers(n);  // the GPUs of this host's ranks; "" elsewhere
  for (size_t r = 0; r < n; ++r)
    if (layout.host_of[r] == layout.host() && r < layout.gpu_of.size()) peers[r] = layout.gpu_of[r];
  std::vector<int> row(n, kUnknownLinks);
  if (!id.empty()) row = nvlink_row(discover_gpus(), id, peers);
  std::vector<int> all(n * n);
  check_mpi(MPI_Allgather(row.data(), static_cast<int>(n), MPI_INT, all.data(), static_cast<int>(n), MPI_INT, comm),
            "MPI_Allgather of NVLink links");
  std::vector<std::vector<int>> links(n);
  for (size_t r = 0; r < n; ++r)
    links[r].assign(all.begin() + static_cast<long>(r * n), all.begin() + static_cast<long>((r + 1) * n));
  return links;
}

std::string cpu_binding() {
  std::vector<int> cores;
  std::set<int> nodes;
  if (!bound_cores(cores, nodes)) return "cores ?";
  return fmt::format("cores {} NUMA {}", ranges(cores),
                     nodes.empty() ? "?" : ranges(std::vector<int>(nodes.begin(), nodes.end())));
}

std::string describe_rank_placement(const RankLayout& layout, const Backend& backend, int cuda_device,
                                    const std::string& transport) {
  const bool gpu = backend.device() == Device::gpu;
  return fmt::format(
      "Pid {:6} on {:>12} {} ({}) transport {}", static_cast<long>(getpid()), layout.host(),
      gpu ? gpu_placement(cuda_device) : "CPU", cpu_binding(),
      gpu ? transport + " (per implementation: see the transport column)" : cpu_transport(layout, transport));
}

std::string startup_block(MPI_Comm comm, const RankLayout& layout, const Backend& backend, int cuda_device,
                          const RunOptions& opts, std::uint64_t measurements, const std::string& results) {
  const auto lines = gather_strings(comm, describe_rank_placement(layout, backend, cuda_device, opts.transport));
  if (layout.rank != 0) return "";
  std::string s = fmt::format("# ccbench: {} ranks on {} host{}, {} ranks\n# Using devices\n", layout.nranks,
                              layout.nodes, layout.nodes == 1 ? "" : "s", name(backend.device()));
  for (size_t r = 0; r < lines.size(); ++r) s += fmt::format("#  Rank {:3} {}\n", r, lines[r]);
  if (layout.nranks == 1)  // most often a launch without mpirun
    s += "# note: 1 rank: a collective of one rank moves no data between ranks. Start N ranks with mpirun -np N "
         "ccbench ... (one per GPU; with --device cpu, one per core)\n";
  s += fmt::format("# Ring order ({}): {}\n", opts.ring_order.kind_name(),
                   describe_ring_order(ring_order(opts.ring_order, layout)));
  s += fmt::format("# Tree: {}\n", name(opts.tree));
  if (opts.pattern != InputPattern::integer)
    s +=
        fmt::format("# Input pattern: {} (full-precision values, signed zeros, NaN, subnormals)\n", name(opts.pattern));
  s += fmt::format("# Measurements: {}{}\n", measurements, opts.cycles == 0 ? " per cycle (until stopped)" : "");
  s += fmt::format("# Iterations: {} warm-up, {} timed, agg iters {}{}\n", opts.warmup, opts.iterations, opts.agg_iters,
                   opts.agg_iters > 1 ? " (collectives back to back per iteration; times are per collective)" : "");
  s += fmt::format("# Results: {}\n", results);
  for (const std::string& note : opts.notes) s += fmt::format("# note: {}\n", note);
  return s;
}

}  // namespace ccbench
