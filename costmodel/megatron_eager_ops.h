// Element-wise HBM traffic of the eager PyTorch passes Megatron-Core runs for GPT-OSS-style layers
// (clamped GLU, expert biases, YaRN RoPE) beyond what its fused kernels move, per layer and micro-batch.
#pragma once
#include "core/hardware_profile.h"
#include "core/parallel_config.h"
#include "costmodel/compute_time.h"
#include "costmodel/eager_elementwise.h"

namespace meshplan {

/// Bytes (reads + writes) one mean layer moves on one GPU, forward and backward, for one micro-batch,
/// in Megatron-Core's eager passes (read at core_v0.16.0; the same code in core_v0.15-0.18), e = bytes per
/// activation element, R = routed rows the local experts see (load k T_local etp, as in moe_cost.h),
/// f = expert width / etp, r = MoE layer fraction, Q = tokens x (query + KV heads) x head_dim / tp / cp
/// (MLA: (query heads + 1) x qk_rope_head_dim, the rotated part):
///  - clamped GLU (ModelSpec::glu_clamp > 0, gated experts): weighted_bias_quick_geglu_impl
///    (megatron/core/fusions/fused_bias_geglu.py) runs `input.chunk(2)`, two `clamp`s and a `torch.cat`
///    on fc1's output before its fused kernel: forward 2 clamps (read f, write f each) + cat (read 2f,
///    write 2f) = 8 f e per row; backward the two clamp masks (read grad and input, write: 3 f e each)
///    and chunk's backward joining the halves (read 2f, write 2f): 10 f e per row.
///  - expert biases (ModelSpec::expert_bias): TEGroupedMLP._apply_bias (moe/experts.py) adds b * p to
///    fc2's output expert by expert, `torch.cat([t + b * p ...])`: b * p (write h), t + bp (read 2h,
///    write h), cat (read h, write h) = 6 h e per row forward; backward the bias and prob gradients
///    (grad * p and grad * b, each read h write h, then their reductions read h) = 6 h e per row.
///  - YaRN (ModelSpec::rope_yarn_factor > 1): apply_rotary_pos_emb (models/common/embeddings/rope_utils.py)
///    falls back to _apply_rotary_pos_emb_bshd when mscale != 1 ("not supported by TE's fused RoPE"):
///    t * cos (2e), rotate_half's negation (e) and cat (2e), * sin (2e), the add (3e) and the cat with
///    t_pass (2e) = 12 e per element of q and k, 10 e more than the fused kernel's read and write; the
///    backward's autograd passes about as many: 10 e.
///   forward = r R (8 f + 6 h [bias]) e + 10 Q e, backward = r R (10 f + 6 h [bias]) e + 10 Q e
/// Zero unless the job runs Megatron-Core's model code (FrameworkKnobs::megatron_core_model_code: megatron,
/// nemo) and the model has the feature.
EagerBytes megatron_eager_op_bytes(const Problem& p, const ParallelConfig& cfg);

/// Adds those bytes at the profile's element-wise rate to `c` (forward, backward input, and the
/// recomputed forward under recompute).
void add_megatron_eager_ops(const Problem& p, const ParallelConfig& cfg, LayerCompute& c);

}  // namespace meshplan
