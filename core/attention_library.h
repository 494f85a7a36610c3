// Which library release's published attention speed a job is costed with (AttentionKernelSpeed::version).
#pragma once
#include <string>

#include "core/hardware_profile.h"

namespace meshplan {

/// True for "9", "9.17", "9.17.0": one to four dot-separated integers of at most 5 digits.
bool valid_library_version(const std::string& v);

/// Negative, 0 or positive as release `a` is older than, the same as or newer than `b`; missing parts
/// count as 0 ("9.17" is "9.17.0"). Both must be valid_library_version().
int compare_library_versions(const std::string& a, const std::string& b);

/// cuDNN's fused attention got much faster across releases on the same GPU (GB200, head dim 128, 4k tokens:
/// 9.17.0 1.46x the 9.13-era figure, 9.22.0 1.56x; NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training),
/// so a profile may list one `kernel` curve per release at a head dimension. This keeps, at each head
/// dimension, the curve of the release a job ran: the newest curve not newer than `version` (a run with
/// cuDNN 9.20.0 takes the 9.19.1 measurement, a lower bound on its speed), or the oldest where every curve is
/// newer. `version` empty: the newest (today's stack). A curve without a version counts as older than any
/// with one. Curves of other kernels are left alone.
void select_attention_library(HardwareProfile& hw, const std::string& kernel, const std::string& version);

}  // namespace meshplan
