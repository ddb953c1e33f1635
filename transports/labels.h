#pragma once
// The grammar of the transport column of result rows, built from the names of
// core/transport_names.h: which labels ccbench writes or wrote. Compare, accept and history read
// these to refuse a file whose transport column is not one of them.
#include <string>
#include <string_view>
#include <vector>

#include "core/transport_names.h"

namespace ccbench {

// Whether `label` is a transport column value ccbench writes or wrote: "-" (a row never set
// up), "none" (one rank, nothing to connect), names of core/transport_names.h other than auto joined by '+'
// (a path that changes between pairs: "shm+mpi", "p2p+net/tcp"), net always with its backend
// ("net/tcp", "net/ib", "net/tcp:N" for a links ceiling of N tcp streams,
// "net/ofi:<provider>:hmem|host"), ofi with its provider and protocol ("ofi:tcp;ofi_rxm:rma";
// transports/ofi/ofi_logic.h), or NCCL's own "nccl" and "nccl:<what NCCL's log names>"
// (transports/nccl_path.h). Compare, accept and history read these.
bool is_transport_label(std::string_view label);
// The single-word labels, for "did you mean" on a label that is none.
std::vector<std::string> transport_label_words();

}  // namespace ccbench
