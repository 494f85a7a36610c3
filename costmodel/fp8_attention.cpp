// FP8 fused attention's measured time ratios against the 16-bit kernel (costmodel/fp8_attention.h).
#include "costmodel/fp8_attention.h"

#include "costmodel/log_interp.h"

namespace meshplan {

std::string fp8_attention_dtype(const Job& job) {
  if (!job.knobs.fp8_attention) return "";
  switch (job.fp8) {
    case Fp8Recipe::Mxfp8: return "mxfp8";
    case Fp8Recipe::Delayed:
    case Fp8Recipe::Current: return "fp8";
    default: return "";
  }
}

Fp8AttentionRatio fp8_attention_ratio(const HardwareProfile& hw, const std::string& dtype, int64_t head_dim,
                                      int64_t window, double seq) {
  if (dtype.empty()) return {};
  for (const Fp8AttentionSpeedup& e : hw.fp8_attention_speedups)
    if (e.dtype == dtype && e.head_dim == head_dim && e.window == window && !e.seq.empty())
      return {log_interpolate(e.seq, e.forward, seq), log_interpolate(e.seq, e.backward, seq)};
  return {};
}

}  // namespace meshplan
