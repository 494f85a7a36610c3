"""Validates a --pipeline-model-parallel-layout string with Megatron Core's own
PipelineParallelLayerLayout (megatron-core wheel from PyPI; its package __init__ needs torch >= 2,
so only this module and its LayerType enum are loaded, with parallel_state stubbed: the parser and
validate_layer_layout do not use it).

usage: megatron_layout_validate.py LAYOUT PP NUM_LAYERS EXPECTED_VPP [MTP_LAYERS]
MTP_LAYERS (default: none) is Megatron's --mtp-num-layers, whose "m" layers the layout must hold.
Exit 0: Megatron accepts it and derives VPP = EXPECTED_VPP. 1: rejected. 4: megatron-core absent."""
import importlib.metadata
import importlib.util
import sys
import types


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def main():
    layout, pp, layers, vpp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    mtp = int(sys.argv[5]) if len(sys.argv) > 5 and int(sys.argv[5]) > 0 else None
    try:
        dist = importlib.metadata.distribution("megatron-core")
    except importlib.metadata.PackageNotFoundError:
        print("SKIPPED: megatron-core is not installed (scripts/install-framework-validators.sh)")
        return 4
    for pkg in ("megatron", "megatron.core", "megatron.core.transformer"):
        sys.modules.setdefault(pkg, types.ModuleType(pkg))
    sys.modules["megatron.core.parallel_state"] = types.ModuleType("megatron.core.parallel_state")
    sys.modules["megatron.core"].parallel_state = sys.modules["megatron.core.parallel_state"]
    base = "megatron/core/transformer/"
    load("megatron.core.transformer.enums", dist.locate_file(base + "enums.py"))
    ppl = load("megatron.core.transformer.pipeline_parallel_layer_layout",
               dist.locate_file(base + "pipeline_parallel_layer_layout.py"))
    try:
        parsed = ppl.PipelineParallelLayerLayout(layout, pp)
        parsed.validate_layer_layout(layers, mtp)
    except Exception as e:
        print(f"FAILED: Megatron Core {dist.version} rejects {layout!r} (pp {pp}, {layers} layers): "
              f"{type(e).__name__}: {e}")
        return 1
    if parsed.virtual_pipeline_model_parallel_size != vpp:
        print(f"FAILED: Megatron derives VPP {parsed.virtual_pipeline_model_parallel_size}, expected {vpp}")
        return 1
    print(f"OK: Megatron Core {dist.version} accepts {layout!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
