// Bytes per logit element of each cross-entropy kernel (costmodel/cross_entropy.h says where each comes from).
#include "costmodel/cross_entropy.h"

namespace meshplan {

CrossEntropyBytes cross_entropy_bytes_per_logit(CrossEntropyKernel k) {
  switch (k) {
    case CrossEntropyKernel::Unfused: return {6.0 + 4.0 + 8.0 + 8.0 + 4.0 + 8.0, 8.0 + 6.0};
    case CrossEntropyKernel::Fused: return {6.0 + 8.0 + 8.0, 8.0 + 6.0};
    case CrossEntropyKernel::Generic: return {12.0, 12.0};
    case CrossEntropyKernel::TorchFp32: return {6.0 + 8.0, 4.0 + 12.0 + 6.0};
    case CrossEntropyKernel::TeInplace: return {2.0 + 2.0 + 2.0, 2.0 + 2.0};
    case CrossEntropyKernel::Te: return {2.0 + 2.0 + 4.0, 8.0 + 6.0};
    case CrossEntropyKernel::FlashXentropy: return {2.0, 2.0 + 2.0};
  }
  return {12.0, 12.0};
}

double train_metric_bytes_per_logit(int passes) { return passes > 0 ? passes * (6.0 + 8.0) : 0.0; }

}  // namespace meshplan
