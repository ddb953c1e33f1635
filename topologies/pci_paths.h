#pragma once
// PCI paths between devices in nvidia-smi's words, read from sysfs: how far apart two PCI devices
// (GPUs, NICs) sit in the PCI tree of one host.
#include <string>

namespace ccbench {

// "0000:19:00.0" from NVML's "00000000:19:00.0" (or any case): the name sysfs uses.
std::string sysfs_pci_name(const std::string& bus_id);

// The device's path in the PCI tree, e.g. /sys/devices/pci0000:00/0000:00:01.0/0000:19:00.0 ("" if
// unknown). `sysfs` is the root of /sys (tests point it at a tree of their own).
std::string pci_device_path(const std::string& sysfs_device_link, const std::string& sysfs = "/sys");

// The class of the path between two devices of one host from their PCI tree paths:
//   PIX  at most one PCIe bridge between them      PXB  several bridges, no host bridge
//   PHB  through the host bridge (same root)       NODE different roots on the same NUMA node
//   SYS  different NUMA nodes (the socket interconnect)
// "" when either path is unknown.
std::string pci_path_class(const std::string& path_a, int numa_a, const std::string& path_b, int numa_b);

// NUMA node of a PCI device from sysfs (-1 when unknown).
int pci_numa_node(const std::string& sysfs_pci_name, const std::string& sysfs = "/sys");

}  // namespace ccbench
