#pragma once
// The GPUs of this node through NVML (loaded at run time with dlopen, as NCCL does): names, UUIDs,
// PCI ids, NUMA nodes, PCIe link generation and width (current and maximum), NVLink links up, and
// the path between every GPU pair in nvidia-smi's words (NV#, PIX, PXB, PHB, NODE, SYS).
// Fields NVML does not answer are left out; without a driver: {"available": false, "reason": ...}.
#include <nlohmann/json.hpp>

namespace ccbench {

nlohmann::ordered_json discover_gpus();

}  // namespace ccbench
