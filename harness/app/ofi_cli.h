#pragma once
// The libfabric (ofi) flags `run` and `links` share: --ofi-provider, --ofi-domain, --ofi-protocol
// (transports/ofi/ofi_logic.h). Values are kept as strings and checked by finish(); whether the
// named provider and domain exist is known only where libfabric runs, at start-up.
#include <string>

#include <CLI/CLI.hpp>

#include "transports/ofi/ofi_logic.h"

namespace ccbench {

class OfiFlags {
 public:
  void add(CLI::App& app);
  // The validated options, `hmem` as --gpudirect says; Error(usage) naming the flag.
  OfiOptions finish(bool hmem) const;

 private:
  std::string provider_, domain_, protocol_ = "auto";
};

}  // namespace ccbench
