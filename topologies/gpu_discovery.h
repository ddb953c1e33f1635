#pragma once
// The GPUs of this node through NVML (loaded at run time, core/nvml_library.h, as NCCL does): names, UUIDs,
// PCI ids, NUMA nodes, PCIe link generation and width (current and maximum), NVLink links up, and
// the path between every GPU pair in nvidia-smi's words (NV#, PIX, PXB, PHB, NODE, SYS).
// Fields NVML does not answer are left out; without a driver: {"available": false, "reason": ...}.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccbench {

nlohmann::ordered_json discover_gpus();

// The NVLink links (RankLayout::gpu_links' values) between the GPU with PCI id `mine` and each GPU
// of `peers` (PCI ids in any case or NVML's 8-digit domain form; "" for a rank whose GPU is not
// known here), read from discover_gpus()'s result: the N of an NV# path, 0 for any other path
// class, kSameGpuLinks for the same GPU, kUnknownLinks where the result does not say. Pure.
std::vector<int> nvlink_row(const nlohmann::ordered_json& gpus, const std::string& mine,
                            const std::vector<std::string>& peers);

}  // namespace ccbench
