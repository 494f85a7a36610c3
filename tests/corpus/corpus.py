#!/usr/bin/env python3
"""Bad-input corpus: a table of hostile or careless inputs, each run against the meshplan binary.

Every case must exit 2 with exactly one line on stderr, within a time and memory bound, and leave
every file it was given (inputs and an existing --output file) byte-identical.

  python3 tests/corpus/corpus.py --bin build/cli/meshplan [--group NAME] [--list] [-v]

Cases are generated here (no binary corpus checked in): a valid base model / hardware profile /
plan file / schedule file is mutated one field at a time. Groups let ctest run them in parallel.
"""
import argparse
import hashlib
import json
import os
import shutil
import stat
import sys
import tempfile
import time

# Per case; the contract is "under a second" on an idle machine. scripts/test-sanitize.sh raises it
# (ASan + UBSan binaries start and run a few times slower); the release suite keeps 5 s.
TIME_LIMIT_S = float(os.environ.get("MESHPLAN_CORPUS_TIME_LIMIT_S", "5.0"))
MEMORY_LIMIT_KB = 1 << 20    # 1 GiB peak RSS per case

INT64_MAX = 2**63 - 1
BIG = ["0", "-1", "2147483648", "4294967296", str(2**40), str(2**62), str(INT64_MAX), str(2**64),
       "1e9", "1e15", "abc", "1.5", "[1, 2]", "{a: 1}", '""']

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BASE_MODEL = {
    "name": "corpus-llama", "model_type": "llama", "hidden_size": 256, "num_hidden_layers": 4,
    "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 688,
    "vocab_size": 1024, "max_position_embeddings": 512,
}

BASE_HW = """name: corpus-gpu
source: corpus
provenance: {kind: datasheet, date: 2024-01-01}
gpu:
  name: Corpus GPU
  memory_gb: 80
  reserved_memory_gb: 2
  other_memory_gb: 2
  hbm_bandwidth_gb_per_s: 2039
  hbm_efficiency: 0.8
  peak_tflops: {bf16: 312, fp32: 19.5}
  gemm_efficiency:
    - {gflop: 1, efficiency: 0.5}
    - {gflop: 100, efficiency: 0.8}
node:
  gpus_per_node: 8
  intra_node: {bandwidth_gb_per_s: 300, latency_us: 5, efficiency: 0.8}
network:
  inter_node: {bandwidth_gb_per_s: 25, latency_us: 10, efficiency: 0.8}
cost: {dollars_per_gpu_hour: 2}
"""

HW_FIELDS = {  # field path in BASE_HW -> line prefix to replace
    "memory_gb": "  memory_gb: 80", "reserved_memory_gb": "  reserved_memory_gb: 2",
    "other_memory_gb": "  other_memory_gb: 2", "hbm_bandwidth_gb_per_s": "  hbm_bandwidth_gb_per_s: 2039",
    "hbm_efficiency": "  hbm_efficiency: 0.8", "peak_tflops": "  peak_tflops: {bf16: 312, fp32: 19.5}",
    "gpus_per_node": "  gpus_per_node: 8",
    "intra_node": "  intra_node: {bandwidth_gb_per_s: 300, latency_us: 5, efficiency: 0.8}",
    "inter_node": "  inter_node: {bandwidth_gb_per_s: 25, latency_us: 10, efficiency: 0.8}",
    "cost": "cost: {dollars_per_gpu_hour: 2}",
    "gemm0": "    - {gflop: 1, efficiency: 0.5}",
}


def yaml_of(d):
    return "".join(f"{k}: {json.dumps(v) if isinstance(v, str) else v}\n" for k, v in d.items())


class Case:
    def __init__(self, group, name, args, files=None, special=None):
        self.group, self.name, self.args = group, name, args
        self.files = files or {}      # relative name -> bytes
        self.special = special or {}  # relative name -> "fifo" | "dir" | "big"


def model_cases():
    cases = []
    est = lambda f: ["estimate", "--model", f, "--hardware", "a100-80gb-sxm", "--gpus", "8",
                     "--global-batch", "16", "--tp", "1", "--output", "{dir}/existing.json"]
    fields = ["hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
              "intermediate_size", "vocab_size", "max_position_embeddings"]
    for field in fields:
        for value in BIG:
            if field == "max_position_embeddings" and value == "0":
                continue  # 0 = unknown, valid
            for fmt in ("yaml", "json"):
                m = dict(BASE_MODEL)
                if fmt == "yaml":
                    text = yaml_of(m).replace(f"{field}: {m[field]}", f"{field}: {value}")
                    fname = "m.yaml"
                else:
                    if value in ("{a: 1}",):
                        value = '{"a": 1}'
                    text = json.dumps(m).replace(f'"{field}": {m[field]}', f'"{field}": {value}')
                    fname = "m.json"
                cases.append(Case("model", f"{fmt} {field}={value}", est("{dir}/" + fname),
                                  {fname: text.encode()}))
    shape = [("heads do not divide hidden", {"num_attention_heads": 7, "num_key_value_heads": 7}),
             ("kv heads do not divide heads", {"num_key_value_heads": 3}),
             ("1e15+ parameters", {"hidden_size": 2**20, "num_hidden_layers": 100000,
                                   "num_attention_heads": 1024, "num_key_value_heads": 1024,
                                   "intermediate_size": 2**22}),
             ("1e9 layers", {"num_hidden_layers": 10**9}), ("2^31 layers", {"num_hidden_layers": 2**31}),
             ("hidden 2^31", {"hidden_size": 2**31}), ("vocab 1e15", {"vocab_size": 10**15}),
             ("dropout 1.5", {"attention_dropout": 1.5}), ("mlp bogus", {"mlp": "cubic"}),
             ("biases not bool", {"biases": "maybe"})]
    for name, over in shape:
        m = dict(BASE_MODEL, **over)
        cases.append(Case("model", name, est("{dir}/m.yaml"), {"m.yaml": yaml_of(m).encode()}))
    y = yaml_of(BASE_MODEL)
    raw = {
        "non-UTF-8 name": y.replace("corpus-llama", "corpus-\xff-llama").encode("latin-1"),
        "non-UTF-8 value": (y + "model_type: ll\xe9ama\n").encode("latin-1"),
        "non-UTF-8 key": (y + "k\xfey: 1\n").encode("latin-1"),
        "non-UTF-8 JSON": json.dumps(BASE_MODEL).replace("corpus-llama", "c\\u00ff").encode()
                          .replace(b"c\\u00ff", b"c\xff"),
        "overlong UTF-8": y.replace("corpus-llama", "c\xc0\xafx").encode("latin-1"),
        "surrogate UTF-8": y.replace("corpus-llama", "c\xed\xa0\x80x").encode("latin-1"),
        "empty file": b"", "only a comment": b"# nothing\n", "a list": b"- 1\n- 2\n",
        "a scalar": b"42\n", "binary garbage": bytes(range(256)) * 4, "NUL bytes": b"\0" * 64,
        "truncated JSON": json.dumps(BASE_MODEL)[:40].encode(), "unclosed flow": b"{hidden_size: [1, 2\n",
        "tab indentation": b"hidden_size: 4\n\tnum_hidden_layers: 2\n",
        "deep flow nesting 100000": (y + "x: " + "[" * 100000 + "]" * 100000 + "\n").encode(),
        "deep flow nesting 65": (y + "x: " + "{a: " * 65 + "1" + "}" * 65 + "\n").encode(),
        "deep block nesting 200": (y + "".join(" " * i + f"k{i}:\n" for i in range(200)) + " " * 200 + "v: 1\n").encode(),
        "deep sequence nesting": (y + "x:\n" + "- " * 5000 + "1\n").encode(),
        "deep JSON nesting": (json.dumps(BASE_MODEL)[:-1] + ', "x": ' + "[" * 100000 + "]" * 100000 + "}").encode(),
        "missing hidden_size": yaml_of({k: v for k, v in BASE_MODEL.items() if k != "hidden_size"}).encode(),
        "missing vocab_size": yaml_of({k: v for k, v in BASE_MODEL.items() if k != "vocab_size"}).encode(),
        "missing layers": yaml_of({k: v for k, v in BASE_MODEL.items() if k != "num_hidden_layers"}).encode(),
        "hidden_size as map": y.replace("hidden_size: 256", "hidden_size: {a: 1}").encode(),
        "alias bomb": b"a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                      b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c]\n"
                      b"hidden_size: *d\n",
        "undefined alias": y.replace("hidden_size: 256", "hidden_size: *nope").encode(),
        "huge number text": y.replace("hidden_size: 256", "hidden_size: " + "9" * 5000).encode(),
    }
    for name, data in raw.items():
        cases.append(Case("model", name, est("{dir}/m.yaml"), {"m.yaml": data}))
    for name, kind in [("a FIFO", "fifo"), ("a directory", "dir"), ("a 65 MiB file", "big")]:
        cases.append(Case("model", name, est("{dir}/m.yaml"), special={"m.yaml": kind}))
    cases.append(Case("model", "/dev/zero", est("/dev/zero")))
    cases.append(Case("model", "missing file", est("{dir}/nope.yaml")))
    return cases


def hardware_cases():
    cases = []
    model = os.path.join(SRC, "examples/models/llama-2-7b.yaml")
    est = lambda f: ["estimate", "--model", model, "--hardware", f, "--gpus", "8",
                     "--global-batch", "16", "--tp", "8", "--output", "{dir}/existing.json"]
    bad_numbers = ["0", "-1", "1e308", "1e-308", ".nan", ".inf", "x", "[1]"]
    for field, line in HW_FIELDS.items():
        key = line.strip().split(":")[0].lstrip("- ")
        for v in bad_numbers:
            if field in ("peak_tflops",):
                new = f"  peak_tflops: {{bf16: {v}}}"
            elif field in ("intra_node", "inter_node"):
                for sub in ("bandwidth_gb_per_s", "latency_us", "efficiency"):
                    if sub == "latency_us" and v in ("0", "1e-308"):
                        continue  # 0 latency is allowed
                    new_line = line.replace({"bandwidth_gb_per_s": "300" if field == "intra_node" else "25",
                                             "latency_us": "5" if field == "intra_node" else "10",
                                             "efficiency": "0.8"}[sub].join([f"{sub}: ", ","])
                                            if sub != "efficiency" else f"{sub}: 0.8}}",
                                            f"{sub}: {v}," if sub != "efficiency" else f"{sub}: {v}}}")
                    cases.append(Case("hardware", f"{field}.{sub}={v}", est("{dir}/hw.yaml"),
                                      {"hw.yaml": BASE_HW.replace(line, new_line).encode()}))
                continue
            elif field == "cost":
                if v in ("0", "1e-308"):
                    continue  # price 0 = unknown, valid
                new = f"cost: {{dollars_per_gpu_hour: {v}}}"
            elif field == "gemm0":
                new = f"    - {{gflop: 1, efficiency: {v}}}"
            else:
                if field in ("reserved_memory_gb", "other_memory_gb") and v in ("0", "1e-308"):
                    continue  # no reserve is valid
                new = f"  {key}: {v}"
            cases.append(Case("hardware", f"{field}={v}", est("{dir}/hw.yaml"),
                              {"hw.yaml": BASE_HW.replace(line, new).encode()}))
    extra = {
        "gpus_per_node 2^31": BASE_HW.replace("gpus_per_node: 8", "gpus_per_node: 2147483648"),
        "gpus_per_node 1e6": BASE_HW.replace("gpus_per_node: 8", "gpus_per_node: 1000000"),
        "gpus_per_node INT64_MAX": BASE_HW.replace("gpus_per_node: 8", f"gpus_per_node: {INT64_MAX}"),
        "no gemm_efficiency": "\n".join(l for l in BASE_HW.splitlines()
                                        if "gemm_efficiency" not in l and "gflop" not in l) + "\n",
        "empty gemm_efficiency": BASE_HW.replace("  gemm_efficiency:\n    - {gflop: 1, efficiency: 0.5}\n"
                                                 "    - {gflop: 100, efficiency: 0.8}\n", "  gemm_efficiency: []\n"),
        "gemm_efficiency a map": BASE_HW.replace("  gemm_efficiency:\n    - {gflop: 1, efficiency: 0.5}\n"
                                                 "    - {gflop: 100, efficiency: 0.8}\n", "  gemm_efficiency: {a: 1}\n"),
        "gemm point a scalar": BASE_HW.replace("    - {gflop: 1, efficiency: 0.5}", "    - 7"),
        "reserved above memory": BASE_HW.replace("reserved_memory_gb: 2", "reserved_memory_gb: 90"),
        "memory 1e308 GB": BASE_HW.replace("memory_gb: 80", "memory_gb: 1e308").replace("reserved_memory_gb: 1e308", "reserved_memory_gb: 2"),
        "no gpu section": "\n".join(l for l in BASE_HW.splitlines() if not l.startswith("  ") and l != "gpu:") + "\n",
        "gpu a list": BASE_HW.replace("gpu:\n  name: Corpus GPU", "gpu: [1]\nxgpu:\n  name: Corpus GPU"),
        "no node": BASE_HW.replace("node:\n  gpus_per_node: 8", "xnode:\n  gpus_per_node: 8"),
        "no peak_tflops": BASE_HW.replace("  peak_tflops: {bf16: 312, fp32: 19.5}\n", ""),
        "empty peak_tflops": BASE_HW.replace("{bf16: 312, fp32: 19.5}", "{}"),
        "peak key a list": BASE_HW.replace("{bf16: 312, fp32: 19.5}", "{[1]: 312}"),
        "non-UTF-8 name": BASE_HW.replace("Corpus GPU", "Corpus \udcff GPU"),
        "non-UTF-8 key": BASE_HW + "\udcfekey: 1\n",
        "deep nesting": BASE_HW + "x: " + "[" * 100000 + "]" * 100000 + "\n",
        "deep unknown key 100000": BASE_HW + "".join("{a: " for _ in range(100000)) + "}" * 100000 + "\n",
        "a list": "- 1\n", "empty": "", "garbage": "\x01\x02\x03: ][\n",
    }
    for name, text in extra.items():
        cases.append(Case("hardware", name, est("{dir}/hw.yaml"),
                          {"hw.yaml": text.encode("utf-8", "surrogateescape")}))
    for name, kind in [("a FIFO", "fifo"), ("a directory", "dir"), ("a 65 MiB file", "big")]:
        cases.append(Case("hardware", name, est("{dir}/hw.yaml"), special={"hw.yaml": kind}))
    cases.append(Case("hardware", "/dev/zero", est("/dev/zero")))
    cases.append(Case("hardware", "unknown profile name", est("no-such-gpu")))
    return cases


def flag_cases():
    cases = []
    model = os.path.join(SRC, "examples/models/llama-2-7b.yaml")
    base = {"--model": model, "--hardware": "a100-80gb-sxm", "--gpus": "8", "--global-batch": "64",
            "--tp": "8"}
    def with_flag(cmd, flag, value, drop=()):
        args = dict(base)
        if cmd == "plan":
            args.pop("--tp")
        for d in drop:
            args.pop(d, None)
        args[flag] = value
        out = [cmd]
        for k, v in args.items():
            out += [k, v]
        return out + ["--output", "{dir}/existing.json"]
    int_bad = ["0", "-1", "4294967296", str(2**40), str(INT64_MAX), str(2**64), "abc", "1.5", ""]
    for cmd in ("estimate", "plan", "simulate"):
        for flag in ("--gpus", "--global-batch", "--seq"):
            for v in int_bad + ([str(2**62)] if flag != "--gpus" else []):
                if flag == "--seq" and v in ("0", ""):
                    continue  # --seq 0 means the model's max_position_embeddings
                cases.append(Case("flags", f"{cmd} {flag} {v}", with_flag(cmd, flag, v)))
    for cmd in ("estimate", "simulate"):
        for flag, values in [("--micro-batch", ["0", "-1", str(2**62), "4611686018427387904", "65"]),
                             ("--tp", ["0", "-1", "3", "16", "2147483648", "1e9"]),
                             ("--pp", ["0", "-1", "33", "2147483647"]),
                             ("--zero", ["4", "-1"]), ("--recompute", ["sometimes"]),
                             ("--schedule", ["zigzag"]), ("--virtual-stages", ["0", "-3", "2147483647"]),
                             ("--dtype", ["fp64"]), ("--bytes-per-param", ["15"]),
                             ("--layers-per-stage", ["1,2", "0", "x", "99999999999"]),
                             ("--format", ["xml"])]:
            for v in values:
                cases.append(Case("flags", f"{cmd} {flag} {v}", with_flag(cmd, flag, v)))
    for flag, values in [("--tp", ["0", "8,,8", "x", "2147483648"]), ("--pp", ["0", "-1"]),
                         ("--zero", ["4", "0,9"]), ("--micro-batch", ["0", str(2**62)]),
                         ("--recompute", ["none,bogus"]), ("--schedule", ["zigzag"]),
                         ("--virtual-stages", ["0"]), ("--top", ["0", "-5"]),
                         ("--objective", ["speed"]), ("--export", ["pytorch"]),
                         ("--max-tp", ["-1"]), ("--format", ["xml"])]:
        for v in values:
            cases.append(Case("flags", f"plan {flag} {v}", with_flag("plan", flag, v)))
    for cmd in ("estimate", "plan"):
        cases.append(Case("flags", f"{cmd} non-UTF-8 flag value", with_flag(cmd, "--dtype", "bf\udcff16")))
        cases.append(Case("flags", f"{cmd} --output into a missing dir",
                          with_flag(cmd, "--gpus", "8")[:-2] + ["--output", "{dir}/no/such/dir/x.json"]))
        cases.append(Case("flags", f"{cmd} --output a directory",
                          with_flag(cmd, "--gpus", "8")[:-2] + ["--output", "{dir}"]))
        cases.append(Case("flags", f"{cmd} missing --model", with_flag(cmd, "--gpus", "8", drop=("--model",))))
        cases.append(Case("flags", f"{cmd} unknown flag", with_flag(cmd, "--gpus", "8") + ["--bogus"]))
    scale = ["scale", "--hardware", "a100-80gb-sxm", "--gpus", "1024", "--days", "30"]
    for flag, v in [("--compute", "-1"), ("--compute", "nan"), ("--compute", "1e400"), ("--gpus", "0"),
                    ("--gpus", str(2**62)), ("--days", "-1"), ("--days", "inf"), ("--mfu", "2"), ("--mfu", "0"),
                    ("--tokens-per-param", "-20"), ("--dtype", "fp64")]:
        args = list(scale)
        if flag in args:
            args[args.index(flag) + 1] = v
        else:
            args += [flag, v]
        cases.append(Case("flags", f"scale {flag} {v}", args))
    for name, files, args in [
            ("validate a FIFO", {}, ["validate", "{dir}/v.yaml"]),
            ("validate non-UTF-8", {"v.yaml": b"source: \xff\n"}, ["validate", "{dir}/v.yaml"]),
            ("validate runs missing", {"v.yaml": b"hardware: a100-80gb-sxm\nmodels: {}\n"}, ["validate", "{dir}/v.yaml"]),
            ("validate model key a list", {"v.yaml": b"hardware: a100-80gb-sxm\nmodels: {[1]: {hidden_size: 1}}\nruns: []\n"},
             ["validate", "{dir}/v.yaml"]),
            ("validate deep", {"v.yaml": b"hardware: x\nmodels: " + b"[" * 10000 + b"]" * 10000 + b"\n"},
             ["validate", "{dir}/v.yaml"])]:
        cases.append(Case("flags", name, args, files, {"v.yaml": "fifo"} if "FIFO" in name else None))
    cases.append(Case("flags", "no subcommand", []))
    cases.append(Case("flags", "unknown subcommand", ["frobnicate"]))
    return cases


def plan_cases(plan_text):
    cases = []
    sim = lambda f: ["simulate", "--plan", f, "--output", "{dir}/existing.json"]
    j = json.loads(plan_text)
    def mutate(path, value):
        d = json.loads(plan_text)
        node = d
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
        return json.dumps(d)
    cfg = ["candidates", 0, "config"]
    for key in ("tp", "pp", "dp", "micro_batch_size", "num_micro_batches", "virtual_stages", "zero_stage"):
        for v in [0, -1, 2**32 + 8, 2**31, 999999999999, INT64_MAX, 2**64 + 1, "x", 1.5, None]:
            if (v is None and key in ("virtual_stages", "zero_stage")) or (v == 0 and key == "zero_stage"):
                continue  # optional keys: absent means the default; ZeRO stage 0 is valid
            cases.append(Case("plan", f"config.{key}={v}", sim("{dir}/p.json"),
                              {"p.json": mutate(cfg + [key], v).encode()}))
    for key in ("gpus", "global_batch", "seq_len"):
        for v in [0, -1, 2**32, 2**62, INT64_MAX, 2**64, "x"]:
            cases.append(Case("plan", f"job.{key}={v}", sim("{dir}/p.json"),
                              {"p.json": mutate(["problem", "job", key], v).encode()}))
    for key, v in [("num_hidden_layers", 10**9), ("hidden_size", 2**31), ("vocab_size", 10**15),
                   ("num_attention_heads", 0)]:
        cases.append(Case("plan", f"model.{key}={v}", sim("{dir}/p.json"),
                          {"p.json": mutate(["problem", "model", key], v).encode()}))
    for key, v in [("memory_gb", 1e308), ("hbm_bandwidth_gb_per_s", 1e-308)]:
        cases.append(Case("plan", f"hardware.gpu.{key}={v}", sim("{dir}/p.json"),
                          {"p.json": mutate(["problem", "hardware", "gpu", key], v).encode()}))
    raw = {
        "schema wrong": mutate(["schema"], "meshplan.plan/99").encode(),
        "candidates a map": mutate(["candidates"], {"a": 1}).encode(),
        "candidates empty": mutate(["candidates"], []).encode(),
        "layers_per_stage huge": mutate(cfg + ["layers_per_stage"], [2**40, 1]).encode(),
        "layers_per_stage nested": mutate(cfg + ["layers_per_stage"], [[[[1]]]]).encode(),
        "layers_per_stage wrong sum": mutate(cfg + ["layers_per_stage"], [1]).encode(),
        "deep nesting": (plan_text.rstrip()[:-1] + ', "x": ' + "[" * 100000 + "]" * 100000 + "}").encode(),
        "not JSON": b"this is not json",
        "truncated": plan_text[: len(plan_text) // 2].encode(),
        "non-UTF-8": plan_text.replace('"schema"', '"sch\udcffema"', 1).encode("utf-8", "surrogateescape"),
        "non-UTF-8 model name": plan_text.encode().replace(b'"llama-2-7b"', b'"llama-\xff"', 1),
        "empty": b"", "a list": b"[1, 2]",
    }
    for name, data in raw.items():
        cases.append(Case("plan", name, sim("{dir}/p.json"), {"p.json": data}))
    for name, kind in [("a FIFO", "fifo"), ("a directory", "dir"), ("a 65 MiB file", "big")]:
        cases.append(Case("plan", name, sim("{dir}/p.json"), special={"p.json": kind}))
    cases.append(Case("plan", "/dev/zero", sim("/dev/zero")))
    for idx in ["99", "-1", "4294967296"]:
        cases.append(Case("plan", f"--candidate {idx}", sim("{dir}/p.json") + ["--candidate", idx],
                          {"p.json": plan_text.encode()}))
    cases.append(Case("plan", "--plan with --model", sim("{dir}/p.json") + ["--model", "x.yaml"],
                      {"p.json": plan_text.encode()}))
    return cases


def schedule_cases():
    cases = []
    sim = lambda f: ["simulate", "--schedule-file", f, "--output", "{dir}/existing.json"]
    good = "# meshplan schedule: kind=1f1b pp=2 virtual_stages=1 micro_batches=2\n" \
           "rank 0: F0.0 F1.0 B0.0 B1.0 O\nrank 1: F0.0 B0.0 F1.0 B1.0 O\n"
    texts = {
        "micro-batch index 999999999": good.replace("F1.0 B0.0 B1.0", "F999999999.0 B0.0 B999999999.0"),
        "chunk index 999999999": good.replace("F1.0 B0.0", "F1.999999999 B0.0"),
        "header micro_batches 999999999": good.replace("micro_batches=2", "micro_batches=999999999"),
        "header virtual_stages 999999999": good.replace("virtual_stages=1", "virtual_stages=999999999"),
        "header pp 999999999": good.replace("pp=2", "pp=999999999"),
        "header micro_batches 10^10": good.replace("micro_batches=2", "micro_batches=10000000000"),
        "negative index": good.replace("F1.0", "F-1.0"),
        "unknown action": good.replace("F1.0", "X1.0"),
        "missing chunk": good.replace("F1.0", "F1"),
        "O with numbers": good.replace(" O\nrank 1", " O3\nrank 1"),
        "rank out of order": good.replace("rank 1:", "rank 5:"),
        "no rank lines": "# meshplan schedule: kind=1f1b\n",
        "unknown kind": good.replace("kind=1f1b", "kind=zigzag"),
        "bad header entry": good.replace("pp=2", "pp=two"),
        "garbage line": good + "hello world\n",
        "empty": "",
        "backward before forward": good.replace("rank 0: F0.0 F1.0 B0.0 B1.0 O", "rank 0: B0.0 F0.0 F1.0 B1.0 O"),
        "missing backward": good.replace(" B1.0 O\nrank 1", " O\nrank 1"),
        "non-UTF-8 token": good.replace("F1.0", "F\udcff1.0"),
        "1e6 micro-batches": "# meshplan schedule: kind=gpipe pp=2 virtual_stages=1 micro_batches=1000001\n"
                             "rank 0: F0.0\nrank 1: F0.0\n",
    }
    for name, text in texts.items():
        cases.append(Case("schedule", name, sim("{dir}/s.txt"),
                          {"s.txt": text.encode("utf-8", "surrogateescape")}))
    for name, kind in [("a FIFO", "fifo"), ("a directory", "dir"), ("a 65 MiB file", "big")]:
        cases.append(Case("schedule", name, sim("{dir}/s.txt"), special={"s.txt": kind}))
    cases.append(Case("schedule", "/dev/zero", sim("/dev/zero")))
    return cases


def simulate_cases():
    cases = []
    tiny = os.path.join(SRC, "examples/models/llama-tiny.yaml")
    def sim(gb, mb, extra=(), gpus="1"):
        return ["simulate", "--model", tiny, "--hardware", "a100-80gb-sxm", "--gpus", gpus,
                "--global-batch", gb, "--micro-batch", mb, "--output", "{dir}/existing.json", *extra]
    cases.append(Case("simulate", "1e6 micro-batches pp=2", sim("1000000", "1", ["--pp", "2"], gpus="2")))
    cases.append(Case("simulate", "1e8 micro-batches", sim("100000000", "1")))
    cases.append(Case("simulate", "2^30 micro-batches", sim(str(2**30), "1")))
    cases.append(Case("simulate", "2^62 global batch", sim(str(2**62), "1")))
    cases.append(Case("simulate", "micro-batch 2^62", sim("8", str(2**62))))
    for flag, v in [("--slow-rank", "x"), ("--slow-rank", "1"), ("--slow-link", "=2"),
                    ("--gpu-mtbf-hours", "-1"), ("--trace", "{dir}/no/dir/t.json"),
                    ("--svg", "{dir}/no/dir/t.svg")]:
        cases.append(Case("simulate", f"{flag} {v}", sim("8", "1", [flag, v])))
    model_1e9 = dict(BASE_MODEL, num_hidden_layers=10**9)
    cases.append(Case("simulate", "1e9-layer model", ["simulate", "--model", "{dir}/m.yaml", "--hardware",
                      "a100-80gb-sxm", "--gpus", "8", "--global-batch", "8", "--output", "{dir}/existing.json"],
                      {"m.yaml": yaml_of(model_1e9).encode()}))
    cases.append(Case("simulate", "plan 1e9-layer model", ["plan", "--model", "{dir}/m.yaml", "--hardware",
                      "a100-80gb-sxm", "--gpus", "8", "--global-batch", "8", "--output", "{dir}/existing.json"],
                      {"m.yaml": yaml_of(model_1e9).encode()}))
    return cases


def run_cases():
    cases = []
    tiny = os.path.join(SRC, "examples/models/llama-tiny.yaml")
    base = ["run", "--model", tiny, "--hardware", "a100-80gb-sxm", "--gpus", "1", "--global-batch", "2",
            "--output", "{dir}/existing.json"]
    for v in ["0", "-1", "-100", "abc"]:
        cases.append(Case("run", f"--steps {v}", base + ["--steps", v]))
    cases.append(Case("run", "empty data file", base + ["--steps", "1", "--data", "{dir}/d.txt"], {"d.txt": b""}))
    cases.append(Case("run", "binary data file", base + ["--steps", "1", "--data", "{dir}/d.bin"],
                      {"d.bin": bytes(range(7))}))
    cases.append(Case("run", "data a FIFO", base + ["--steps", "1", "--data", "{dir}/d.txt"], special={"d.txt": "fifo"}))
    cases.append(Case("run", "data a directory", base + ["--steps", "1", "--data", "{dir}/d.txt"], special={"d.txt": "dir"}))
    cases.append(Case("run", "missing data file", base + ["--steps", "1", "--data", "{dir}/nope.txt"]))
    cases.append(Case("run", "--resume without checkpoints", base + ["--steps", "1", "--resume",
                                                                   "--checkpoint-dir", "{dir}/ckpt"]))
    cases.append(Case("run", "--output unwritable", [a if a != "{dir}/existing.json" else "{dir}/no/dir/x.json"
                                                     for a in base] + ["--steps", "1"]))
    cases.append(Case("run", "--backend bogus", base + ["--steps", "1", "--backend", "tpu"]))
    cases.append(Case("calibrate", "--output unwritable", ["calibrate", "--output", "{dir}/no/dir/p.yaml", "--quick"]))
    cases.append(Case("calibrate", "no --output", ["calibrate", "--quick"]))
    cases.append(Case("calibrate", "--backend bogus", ["calibrate", "--output", "{dir}/p.yaml", "--backend", "tpu"]))
    return cases


def all_cases(plan_text):
    return (model_cases() + hardware_cases() + flag_cases() + plan_cases(plan_text) + schedule_cases()
            + simulate_cases() + run_cases())


def make_plan(binary, tmp):
    out = os.path.join(tmp, "base-plan.json")
    import subprocess
    rc = subprocess.call([binary, "estimate", "--model", os.path.join(SRC, "examples/models/llama-2-7b.yaml"),
                          "--hardware", "a100-80gb-sxm", "--gpus", "16", "--global-batch", "64", "--tp", "8",
                          "--pp", "2", "--format", "json", "--output", out], stdout=subprocess.DEVNULL)
    if rc != 0 or not os.path.exists(out):
        sys.exit("corpus: could not write the base plan file with meshplan estimate")
    with open(out) as f:
        return f.read()


def materialize(case, d):
    for name, data in case.files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    for name, kind in case.special.items():
        p = os.path.join(d, name)
        if kind == "fifo":
            os.mkfifo(p)
        elif kind == "dir":
            os.mkdir(p)
        elif kind == "big":
            with open(p, "wb") as f:
                f.truncate(65 << 20)  # sparse: costs no disk
    with open(os.path.join(d, "existing.json"), "w") as f:
        f.write('{"sentinel": "an earlier result that must survive"}\n')


def snapshot(d):
    state = {}
    for root, dirs, files in os.walk(d):
        for name in files:
            p = os.path.join(root, name)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode) and st.st_size < (1 << 20):
                with open(p, "rb") as f:
                    state[p] = hashlib.sha256(f.read()).hexdigest()
            else:
                state[p] = (st.st_mode, st.st_size)
    return state


def run_case(binary, case, d):
    materialize(case, d)
    before = snapshot(d)
    args = [a.replace("{dir}", d) for a in case.args]
    args = [a.encode("utf-8", "surrogateescape") for a in args]
    err_path = os.path.join(tempfile.gettempdir(), f"corpus-stderr-{os.getpid()}")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl="self", OMPI_MCA_pml="ob1")
    start = time.monotonic()
    with open(err_path, "wb") as err, open(os.devnull, "wb") as null:
        pid = os.fork()
        if pid == 0:
            os.dup2(null.fileno(), 1)
            os.dup2(err.fileno(), 2)
            os.setsid()
            try:
                os.execve(binary, [binary.encode()] + args, env)
            finally:
                os._exit(127)
        timed_out = False
        while True:
            wpid, status, usage = os.wait4(pid, os.WNOHANG)
            if wpid:
                break
            if time.monotonic() - start > TIME_LIMIT_S:
                os.killpg(pid, 9)
                timed_out = True
            time.sleep(0.005)
    elapsed = time.monotonic() - start
    with open(err_path, "rb") as f:
        stderr = f.read()
    os.unlink(err_path)
    after = snapshot(d)
    problems = []
    rc = os.waitstatus_to_exitcode(status)
    if timed_out:
        problems.append(f"killed after {TIME_LIMIT_S} s")
    if rc != 2:
        problems.append(f"exit {rc}, expected 2")
    lines = stderr.decode("utf-8", "replace").splitlines()
    if len(lines) != 1 or not stderr.endswith(b"\n"):
        problems.append(f"{len(lines)} stderr lines, expected 1")
    if usage.ru_maxrss > MEMORY_LIMIT_KB:
        problems.append(f"peak RSS {usage.ru_maxrss} KB > {MEMORY_LIMIT_KB} KB")
    changed = [p for p in before if before[p] != after.get(p)]
    if changed:
        problems.append("changed or removed: " + ", ".join(os.path.basename(p) for p in changed))
    return problems, elapsed, usage.ru_maxrss, lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--group", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    tmp = tempfile.mkdtemp(prefix="meshplan-corpus-")
    try:
        cases = [c for c in all_cases(make_plan(binary, tmp)) if not a.group or c.group == a.group]
        if a.list:
            for c in cases:
                print(f"{c.group}: {c.name}")
            print(f"{len(cases)} cases")
            return 0
        failed, slowest, biggest = 0, (0.0, ""), (0, "")
        for i, c in enumerate(cases):
            d = os.path.join(tmp, f"case-{i}")
            os.mkdir(d)
            problems, elapsed, rss, lines = run_case(binary, c, d)
            slowest = max(slowest, (elapsed, c.name))
            biggest = max(biggest, (rss, c.name))
            if problems:
                failed += 1
                print(f"FAIL {c.group}: {c.name}: {'; '.join(problems)}")
                for line in lines[:5]:
                    print(f"     stderr: {line[:300]}")
            elif a.v:
                print(f"ok   {c.group}: {c.name} ({elapsed:.2f} s): {lines[0][:200]}")
            shutil.rmtree(d, ignore_errors=True)
        print(f"corpus{' ' + a.group if a.group else ''}: {len(cases) - failed}/{len(cases)} cases pass; "
              f"slowest {slowest[0]:.2f} s ({slowest[1]}), largest RSS {biggest[0] // 1024} MiB ({biggest[1]})")
        return 1 if failed else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
