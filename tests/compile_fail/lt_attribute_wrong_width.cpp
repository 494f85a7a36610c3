// Must NOT compile (ctest "cuda: a wrong-width cuBLASLt attribute does not compile"): issue 13's bug,
// a uint64_t passed for CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, which cublasLt.h declares uint32_t.
#include "executor/cuda/lt_attributes.h"

void set_alignment_with_the_wrong_width(cublasLtMatmulPreference_t pref) {
  meshplan::exec::lt::set_pref<CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES>(pref, uint64_t{256});
}
