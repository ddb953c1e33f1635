#pragma once
// Launchers of the GPU pattern and check kernels (gpu_check.cu). Every launcher enqueues on
// `stream` (a cudaStream_t) and returns the launch's cudaError_t as an int.
#include <cstddef>
#include <cstdint>

#include "harness/engine/pattern.h"

namespace ccbench::gpu_check {

int fill_input(const PatternSpec& spec, void* dst, std::size_t n, std::uint64_t index_base, void* stream);
int fill_expected(const PatternSpec& spec, void* dst, std::size_t n, void* stream);
int complement(void* dst, const void* src, std::size_t bytes, void* stream);
// Counts into result[0] the elements that do not match and leaves in result[1] the smallest wrong
// index (UINT64_MAX if none); result must be device-visible memory set to {0, UINT64_MAX}.
int compare(const PatternSpec& spec, const void* expected, const void* actual, std::size_t n,
            unsigned long long* result, void* stream);
int check_input(const PatternSpec& spec, const void* buf, std::size_t n, std::uint64_t index_base,
                unsigned long long* result, void* stream);
int count_bytes_not(const void* p, std::size_t bytes, std::uint8_t value, unsigned long long* result, void* stream);

// Keeps `stream` busy for `ns` nanoseconds (one thread spinning on the global timer).
int spin(unsigned long long ns, void* stream);

}  // namespace ccbench::gpu_check
