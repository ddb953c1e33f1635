#include "collectives/cpu/narrow_convert.h"

#include <cstdint>

#include "collectives/cpu/cpu_vectors.h"
#include "collectives/cpu/narrow_lanes.h"
#include "collectives/numeric.h"
#include "core/error.h"

namespace ccbench {

namespace {

// ---- element by element: the definition ----------------------------------------------------

template <typename T>
void widen_scalar(float* dst, const void* src, size_t n) {
  const T* s = static_cast<const T*>(src);
  for (size_t i = 0; i < n; ++i) dst[i] = to_arith(s[i]);
}

template <typename T>
void narrow_scalar(void* dst, const float* src, size_t n) {
  T* d = static_cast<T*>(dst);
  for (size_t i = 0; i < n; ++i) d[i] = result_of<T>(src[i]);
}

#if defined(__x86_64__)
// ---- AVX2 + F16C: 8 elements at a time (narrow_lanes.h), the tail element by element --------

template <typename T>
CCB_AVX2 void widen_vector(float* dst, const void* src, size_t n) {
  const T* s = static_cast<const T*>(src);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, NarrowLanes<T>::widen(s + i));
  widen_scalar<T>(dst + i, s + i, n - i);
}

template <typename T>
CCB_AVX2 void narrow_vector(void* dst, const float* src, size_t n) {
  T* d = static_cast<T*>(dst);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) NarrowLanes<T>::put(d + i, NarrowLanes<T>::narrow(_mm256_loadu_ps(src + i)));
  narrow_scalar<T>(d + i, src + i, n - i);
}
#endif  // __x86_64__

template <typename T>
NarrowConverters scalar_converters() {
  return {&widen_scalar<T>, &narrow_scalar<T>};
}

}  // namespace

bool is_narrow_float_type(DataType t) {
  return t == DataType::float16 || t == DataType::bfloat16 || t == DataType::f8e4m3 || t == DataType::f8e5m2;
}

NarrowConverters narrow_converters(DataType t, bool vectorised) {
#if defined(__x86_64__)
  if (vectorised && vector_isa_available(VectorIsa::avx2)) {
    switch (t) {
      case DataType::float16: return {&widen_vector<half_t>, &narrow_vector<half_t>};
      case DataType::bfloat16: return {&widen_vector<bfloat16_t>, &narrow_vector<bfloat16_t>};
      case DataType::f8e4m3: return {&widen_vector<fp8_e4m3_t>, &narrow_vector<fp8_e4m3_t>};
      case DataType::f8e5m2: return {&widen_vector<fp8_e5m2_t>, &narrow_vector<fp8_e5m2_t>};
      default: break;
    }
  }
#else
  (void)vectorised;
#endif
  switch (t) {
    case DataType::float16: return scalar_converters<half_t>();
    case DataType::bfloat16: return scalar_converters<bfloat16_t>();
    case DataType::f8e4m3: return scalar_converters<fp8_e4m3_t>();
    case DataType::f8e5m2: return scalar_converters<fp8_e5m2_t>();
    default: fail(ExitCode::runtime, "{} is not a narrow float type", name(t));
  }
}

}  // namespace ccbench
