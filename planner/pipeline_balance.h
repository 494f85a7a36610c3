// Pipeline layer splits besides the even one: the head-aware balanced split and Megatron's embedding-and-loss split.
#pragma once
#include <vector>

#include "core/parallel_config.h"

namespace meshplan {

/// Layers per model chunk (pp x v chunks, chunk c on pipeline rank c % pp) that even out the pipeline
/// ranks' forward FLOPs, the last chunk also running the LM head, its loss and any multi-token-prediction
/// modules (costmodel/mtp.h); empty when it would not lower the busiest rank's work below the even split's
/// (core layers_per_chunk), or pp < 2.
/// Practice it follows: Llama 3 "reduce[s] one Transformer layer each from the first and the last stages"
/// to balance its pipeline (Llama 3 herd paper, sec. 3.3.2), Megatron-Core's
/// account_for_embedding/loss_in_pipeline_split count those as one layer each, and Megatron-Bridge's
/// DeepSeek-V3 layout gives the chunk with the MTP layer and loss one decoder layer (Et*4|...|tmL).
/// With f = the mean layer's forward FLOPs per token and x = (LM head + MTP modules) / f layers, a rank
/// should carry W = (L + x) / pp layer-units: the last rank gets round(W - x) layers (at least one per
/// chunk), the others share the rest as evenly as possible (the extra layers to the middle ranks, as the
/// even split); inside a rank the chunks differ by at most one layer, the head's chunk holding the fewer.
/// The embedding lookup is memory bound and is not counted.
std::vector<int> balanced_layers_per_chunk(const Problem& p, int pp, int virtual_stages);

/// Megatron-Core's account_for_embedding_in_pipeline_split + account_for_loss_in_pipeline_split, as
/// Megatron-Bridge's large-model recipes set them (Llama 3.1 405B): the embedding and the loss count as
/// one layer each, the L + 2 slots split equally over the pp x v chunks, and the first chunk (embedding)
/// and the last (loss) build one transformer layer fewer: 0 when a chunk holds one slot (405B over PP 16 x
/// VP 8: 0, 1 x 126, 0). Megatron-Core core_v0.16.0 transformer_block.py get_num_layers_to_build: (L + 2)
/// divisible by pp, and by pp x v with virtual stages. Empty when it does not divide, pp < 2, or the split
/// equals the even one (core layers_per_chunk).
std::vector<int> embedding_loss_layers_per_chunk(const ModelSpec& m, int pp, int virtual_stages);

}  // namespace meshplan
