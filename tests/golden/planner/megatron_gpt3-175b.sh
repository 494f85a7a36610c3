# Megatron-LM arguments from meshplan plan: gpt3-175b on 96 x a100-80gb-sxm (tp=4 pp=3 dp=8, zero 1, 1f1b).
# Launch on 96 GPUs: torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" <data, tokenizer, optimizer arguments>
MEGATRON_ARGS=(
  --tensor-model-parallel-size 4
  --pipeline-model-parallel-size 3
  --micro-batch-size 2
  --global-batch-size 256
  --recompute-granularity full
  --recompute-method uniform
  --recompute-num-layers 1
  --use-distributed-optimizer
  --fp16
  --main-grads-dtype fp32
  --hidden-dropout 0.1
  --attention-dropout 0.1
  --num-layers 96
  --hidden-size 12288
  --num-attention-heads 96
  --ffn-hidden-size 49152
  --seq-length 2048
  --max-position-embeddings 2048
  # vocabulary 50257: set by your tokenizer arguments
)
