"""Checks a meshplan torchtitan/FSDP export: valid TOML (tomllib), and every key one that torchtitan's
JobConfig defines. Key lists copied from torchtitan/config/job_config.py at pytorch/torchtitan
238fa9953e4aec2a62582121564273d7cbb1e9f1 (the [job], [training], [parallelism],
[activation_checkpoint], [compile], [model] and [quantize.linear.float8] dataclasses; Compile: enable,
components, backend; Model; Float8Linear). usage: torchtitan_keys.py FILE.toml; exit 0 ok, 1 not."""
import sys
import tomllib

KNOWN = {
    "job": {"config_file", "dump_folder", "description", "print_config", "custom_config_module"},
    "training": {"dataset", "dataset_path", "local_batch_size", "global_batch_size", "seq_len",
                 "max_norm", "steps", "enable_cpu_offload", "dtype", "mixed_precision_param",
                 "mixed_precision_reduce", "gc_freq", "gc_debug"},
    "parallelism": {"data_parallel_replicate_degree", "data_parallel_shard_degree",
                    "fsdp_reshard_after_forward", "tensor_parallel_degree", "disable_loss_parallel",
                    "enable_async_tensor_parallel", "pipeline_parallel_degree",
                    "module_fqns_per_model_part", "pipeline_parallel_first_stage_less_layers",
                    "pipeline_parallel_last_stage_less_layers", "pipeline_parallel_layers_per_stage",
                    "pipeline_parallel_schedule", "pipeline_parallel_schedule_csv",
                    "pipeline_parallel_microbatch_size", "context_parallel_degree",
                    "context_parallel_rotate_method", "expert_parallel_degree",
                    "expert_tensor_parallel_degree"},
    "activation_checkpoint": {"mode", "selective_ac_option", "per_op_sac_force_recompute_mm_shapes_by_fqns",
                              "early_stop", "memory_budget", "visualize_memory_budget_pareto",
                              "preserve_rng_state", "determinism_check", "debug"},
    "compile": {"enable", "components", "backend"},
    "model": {"name", "flavor", "hf_assets_path", "tokenizer_path", "converters", "print_after_conversion"},
    # [quantize.linear.float8]: Float8Linear
    "quantize.linear.float8": {"enable_fsdp_float8_all_gather", "precompute_float8_dynamic_scale_for_fsdp",
                               "recipe_name", "filter_fqns", "emulate"},
}
SCHEDULES = {"GPipe", "1F1B", "Interleaved1F1B", "LoopedBFS", "InterleavedZeroBubble", "ZBVZeroBubble",
             "DualPipeV"}

cfg = tomllib.load(open(sys.argv[1], "rb"))


def flatten(prefix, table):
    """(section, key) pairs with nested tables joined by dots: [quantize.linear.float8] recipe_name."""
    for key, value in table.items():
        if isinstance(value, dict):
            yield from flatten(f"{prefix}.{key}" if prefix else key, value)
        else:
            yield prefix, key


bad = [f"[{sec}] {key}" for sec, key in flatten("", cfg) if sec not in KNOWN or key not in KNOWN[sec]]
if cfg.get("quantize", {}).get("linear", {}).get("float8", {}).get("recipe_name", "tensorwise") not in {
        "tensorwise", "rowwise", "rowwise_with_gw_hp"}:
    bad.append("quantize.linear.float8.recipe_name")
par = cfg.get("parallelism", {})
if par.get("pipeline_parallel_degree", 1) > 1 and par.get("pipeline_parallel_schedule") not in SCHEDULES:
    bad.append("pipeline_parallel_schedule " + str(par.get("pipeline_parallel_schedule")))
if cfg.get("activation_checkpoint", {}).get("mode") not in {"selective", "full", "memory_budget", "none"}:
    bad.append("activation_checkpoint.mode")
if bad:
    print("FAILED: not torchtitan job config keys/values: " + ", ".join(bad))
    sys.exit(1)
print("OK: " + sys.argv[1])
