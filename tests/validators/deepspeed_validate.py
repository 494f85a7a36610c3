"""Runs DeepSpeed's own DeepSpeedConfig on a meshplan --export deepspeed JSON.

usage: deepspeed_validate.py CONFIG.json GPUS DP TP_TIMES_PP
Exit 0: DeepSpeed accepts the config for a world of GPUS ranks when a Megatron-style mpu reports
DP data-parallel ranks (and, for TP_TIMES_PP > 1, rejects it without one, as the export's note says).
Exit 1: DeepSpeed rejected the config (printed). Exit 4: deepspeed cannot be imported (printed why).
"""
import json
import sys


def main():
    path, gpus, dp, mp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    try:
        import deepspeed.runtime.config as dsc
    except Exception as e:  # not installed, or its dependencies are not
        print(f"SKIPPED: deepspeed cannot be imported here ({type(e).__name__}: {e}); "
              "run scripts/install-deps.sh")
        return 4
    # A world of `gpus` ranks, rank 0, without starting a process group.
    dsc.dist.get_rank = lambda group=None: 0
    dsc.dist.get_world_size = lambda group=None: gpus

    class Mpu:  # what Megatron's parallel_state offers DeepSpeed
        def get_data_parallel_world_size(self):
            return dp

    cfg = json.load(open(path))
    try:
        ds = dsc.DeepSpeedConfig(dict(cfg), mpu=Mpu())
    except Exception as e:
        print(f"FAILED: DeepSpeedConfig rejected {path} with an mpu of DP={dp}: {type(e).__name__}: {e}")
        return 1
    checks = [(ds.train_batch_size, cfg["train_batch_size"]),
              (ds.train_micro_batch_size_per_gpu, cfg["train_micro_batch_size_per_gpu"]),
              (ds.gradient_accumulation_steps, cfg["gradient_accumulation_steps"]),
              (ds.zero_optimization_stage, cfg["zero_optimization"]["stage"])]
    for got, want in checks:
        if got != want:
            print(f"FAILED: DeepSpeed read {got}, the export says {want}")
            return 1
    if mp > 1:
        try:
            dsc.DeepSpeedConfig(dict(cfg))
            print(f"FAILED: without an mpu DeepSpeed took DP = {gpus} and still accepted the batch")
            return 1
        except AssertionError:
            pass  # the export's stated mpu requirement is real
    print(f"OK: DeepSpeedConfig accepts {path} (world {gpus}, DP {dp}, zero "
          f"{ds.zero_optimization_stage})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
