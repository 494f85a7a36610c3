# Megatron-LM arguments from meshplan plan: llama-2-70b on 128 x a100-80gb-sxm (tp=8 pp=4 dp=4, zero 1, interleaved).
# Launch on 128 GPUs: torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" <data, tokenizer, optimizer arguments>
MEGATRON_ARGS=(
  --tensor-model-parallel-size 8
  --pipeline-model-parallel-size 4
  --num-layers-per-virtual-pipeline-stage 4
  --sequence-parallel
  --micro-batch-size 1
  --global-batch-size 1024
  --recompute-granularity selective
  --use-distributed-optimizer
  --overlap-grad-reduce
  --bf16
  --main-grads-dtype fp32
  --hidden-dropout 0.0
  --attention-dropout 0.0
  --num-layers 80
  --hidden-size 8192
  --num-attention-heads 64
  --group-query-attention
  --num-query-groups 8
  --ffn-hidden-size 28672
  --seq-length 4096
  --max-position-embeddings 4096
  --swiglu
  --position-embedding-type rope
  --rotary-base 10000
  --disable-bias-linear
  --normalization RMSNorm
  --untie-embeddings-and-output-weights
  # vocabulary 32000: set by your tokenizer arguments
)
