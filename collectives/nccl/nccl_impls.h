#pragma once
// NCCL baselines, each a named implementation measured on the harness's buffers:
//   nccl       NCCL's own choice of algorithm and protocol
//   nccl-ring  NCCL_ALGO=Ring for this communicator
//   nccl-tree  NCCL_ALGO=Tree for this communicator (all-reduce only: NCCL has no tree for the others)
//   nccl-symm  buffers from ncclMemAlloc registered as symmetric windows (NCCL >= 2.27), which
//              enables NCCL's symmetric-memory kernels
// NVLink SHARP (NVLS) is never enabled by ccbench: NCCL_NVLS_ENABLE is set to 0 unless the user set it.
#include <memory>
#include <string>

#include "collectives/implementation.h"
#include "collectives/nccl/nccl_config.h"

namespace ccbench {

std::unique_ptr<Implementation> make_nccl_default();
std::unique_ptr<Implementation> make_nccl_ring();
std::unique_ptr<Implementation> make_nccl_tree();
std::unique_ptr<Implementation> make_nccl_symm();
// `variant` (one of NCCL's ids: is_nccl()) on a communicator created with `config`
// (--nccl-config); rows skipped with the reason where the config needs a newer NCCL.
std::unique_ptr<Implementation> make_nccl_configured(ImplId variant, const NcclConfig& config);

// "2.28.3", the library loaded at run time (collectives/nccl/nccl_library.h); "none (why)".
std::string nccl_library_version();

}  // namespace ccbench
