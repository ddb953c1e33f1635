#pragma once
// GPU telemetry from NVML, loaded at run time (core/nvml_library.h, as NCCL does): a build without the
// driver's headers, and a machine without a driver, both work. Every NVML function is looked
// up on its own: one a driver lacks makes the queries that need it "not available (this
// driver's NVML has no nvmlX)", not the whole source.
#include <memory>
#include <string>

#include "telemetry/gpu_source.h"

namespace ccbench::telemetry {

// Opens NVML from `library` (the driver's libnvidia-ml.so.1 by default). Never throws: a
// missing library or a failed nvmlInit gives a source whose unavailable() says why.
std::unique_ptr<GpuSource> open_nvml(const std::string& library = "libnvidia-ml.so.1");

}  // namespace ccbench::telemetry
