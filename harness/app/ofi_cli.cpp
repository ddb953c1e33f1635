#include "harness/app/ofi_cli.h"

#include <fmt/format.h>

namespace ccbench {

void OfiFlags::add(CLI::App& app) {
  app.add_option("--ofi-provider", provider_,
                 fmt::format("ofi: libfabric provider, as fi_info names it (tcp;ofi_rxm, shm, efa, cxi, ...) [the "
                             "first every rank offers of: {}; shm only on one node]",
                             fmt::join(kOfiProviderOrder, ", ")))
      ->type_name("NAME");
  app.add_option("--ofi-domain", domain_, "ofi: the provider's domain (NIC or interface: cxi0, lo, ...) [one host: lo "
                 "where the provider has it; else its first]")->type_name("NAME");
  app.add_option("--ofi-protocol", protocol_, "ofi: rma (writes with remote CQ data), tagged (messages), or auto (rma "
                 "where the provider offers it) [auto]")->type_name("NAME");
}

OfiOptions OfiFlags::finish(bool hmem) const {
  OfiOptions o;
  o.provider = provider_;
  o.domain = domain_;
  o.protocol = parse_ofi_protocol(protocol_, "--ofi-protocol");
  o.hmem = hmem;
  validate_ofi_options(o);
  return o;
}

}  // namespace ccbench
