// Extra element-wise traffic of torchtitan's Llama block run eager (costmodel/eager_llama_ops.h).
#include "costmodel/eager_llama_ops.h"

namespace meshplan {

namespace {
constexpr double kFp32Bytes = 4.0;  // RMSNorm upcasts to float32 (x.float())

// One eager RMSNorm over (T, h) minus the fused kernel's read of x and write of the output
// (forward) and twice that (backward), per element (eager_llama_ops.h lists the kernels).
EagerBytes rmsnorm_extra_per_element(double e) {
  const double f = kFp32Bytes;
  const double eager_forward = (e + f) + 2 * f + f + 2 * f + (f + e) + 2 * e;  // 28 + 4e at f = 4
  const double eager_backward = 2 * e + 3 * e + e      // * weight: dx, dw and its sum over tokens
                                + (e + f)              // type_as back to fp32
                                + 2 * f + 3 * f + f    // * rsqrt: dx, d(rsqrt) and its sum over h
                                + f                    // mean: the expanded gradient / h
                                + 2 * f + 2 * f + 3 * f  // pow: self.pow(1) copy, * 2, * grad
                                + 3 * f                // the two gradients of x.float() added
                                + (f + e);             // x.float() back to 16 bits: 76 + 8e
  return {eager_forward - 2 * e, eager_backward - 4 * e};
}
}  // namespace

EagerBytes eager_llama_op_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, double e, bool fused_norm) {
  const double t = static_cast<double>(tp), T = b * s;
  const double h = static_cast<double>(m.hidden_size), f = static_cast<double>(m.intermediate_size);
  EagerBytes out;
  if (!fused_norm) {
    const EagerBytes per = rmsnorm_extra_per_element(e);
    const double elements = static_cast<double>(m.norms_per_layer) * T * h / (sp ? t : 1.0);
    out.forward += per.forward * elements;
    out.backward += per.backward * elements;
  }
  if (m.mlp == MlpKind::Gated) {  // SiLU(a) * c: eager writes silu(a) and reads it back
    out.forward += 2 * e * T * f / t;
    out.backward += 3 * e * T * f / t;
  }
  return out;
}

}  // namespace meshplan
