// Type-safe setters for cuBLASLt descriptor and preference attributes: each attribute we set is
// listed once with the C type cublasLt.h declares for it, and the setter only compiles with a value
// of exactly that type (issue 13: a uint64_t passed for the uint32_t MIN_ALIGNMENT_* attributes made
// every GEMM fail with CUBLAS_STATUS_INVALID_VALUE on the first H100 run).
#pragma once
#include <cublasLt.h>

#include <cstdint>
#include <type_traits>

#include "executor/cuda/cuda_check.h"

// X(attribute, declared C type). The declared types are copied from the doc comment above each
// enumerator in cublasLt.h (CUDA 13.0); tests/executor/test_cuda_lt_attributes.cpp re-reads the
// installed cublasLt.h and fails when any entry disagrees, so a toolkit change is caught without a GPU.
#define MESHPLAN_LT_PREF_ATTRIBUTES(X)                   \
  X(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t)  \
  X(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t) \
  X(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, uint32_t) \
  X(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, uint32_t) \
  X(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, uint32_t)

#define MESHPLAN_LT_DESC_ATTRIBUTES(X)        \
  X(CUBLASLT_MATMUL_DESC_TRANSA, int32_t)     \
  X(CUBLASLT_MATMUL_DESC_TRANSB, int32_t)     \
  X(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t)  \
  X(CUBLASLT_MATMUL_DESC_SCALE_TYPE, int32_t)

namespace meshplan::exec::lt {

/// The declared value type of a preference / descriptor attribute. Not defined for attributes
/// missing from the tables above, so setting one of those does not compile.
template <cublasLtMatmulPreferenceAttributes_t A>
struct PrefType;
template <cublasLtMatmulDescAttributes_t A>
struct DescType;

#define MESHPLAN_LT_PREF_SPECIALISE(attr, ctype) \
  template <>                                    \
  struct PrefType<attr> {                        \
    using type = ctype;                          \
  };
#define MESHPLAN_LT_DESC_SPECIALISE(attr, ctype) \
  template <>                                    \
  struct DescType<attr> {                        \
    using type = ctype;                          \
  };
MESHPLAN_LT_PREF_ATTRIBUTES(MESHPLAN_LT_PREF_SPECIALISE)
MESHPLAN_LT_DESC_ATTRIBUTES(MESHPLAN_LT_DESC_SPECIALISE)
#undef MESHPLAN_LT_PREF_SPECIALISE
#undef MESHPLAN_LT_DESC_SPECIALISE

/// Sets preference attribute A; `value` must have exactly the declared type (write uint32_t{..}).
template <cublasLtMatmulPreferenceAttributes_t A, typename V>
void set_pref(cublasLtMatmulPreference_t pref, V value) {
  static_assert(std::is_same_v<V, typename PrefType<A>::type>,
                "cuBLASLt preference attribute set with a value of the wrong type/width");
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, A, &value, sizeof(value)));
}

/// Sets descriptor attribute A; `value` must have exactly the declared type.
template <cublasLtMatmulDescAttributes_t A, typename V>
void set_desc(cublasLtMatmulDesc_t desc, V value) {
  static_assert(std::is_same_v<V, typename DescType<A>::type>,
                "cuBLASLt descriptor attribute set with a value of the wrong type/width");
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, A, &value, sizeof(value)));
}

/// One table row for the header cross-check test: enumerator name, declared type name, its bytes.
struct AttributeInfo {
  const char* name;
  const char* c_type;
  unsigned bytes;
};
#define MESHPLAN_LT_INFO_ROW(attr, ctype) AttributeInfo{#attr, #ctype, sizeof(ctype)},
inline constexpr AttributeInfo kAttributeTable[] = {
    MESHPLAN_LT_PREF_ATTRIBUTES(MESHPLAN_LT_INFO_ROW) MESHPLAN_LT_DESC_ATTRIBUTES(MESHPLAN_LT_INFO_ROW)};
#undef MESHPLAN_LT_INFO_ROW

}  // namespace meshplan::exec::lt
