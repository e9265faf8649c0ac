#!/usr/bin/env python3
"""Checks kiln_bench's JSON (the CI smoke run's): the machine object and every key of
BENCHMARKS.md on every row, every workload present, every compiled result matching eager, and
the compilations of bert-dynamic and resnet18-dynamic: automatic dynamic recompiles once in the
first pass (static, then one symbolic graph for every later length or image size) and never in
the second.

    python3 tools/bench/check_smoke_json.py kiln_bench_smoke.json
"""
import json
import sys

MACHINE_KEYS = {"cpu", "cores", "threads", "gpu", "date", "kiln_commit"}
ROW_KEYS = {"workload", "device", "phase", "mode", "eager_ms", "compiled_ms", "speedup",
            "compile_s_cold", "compile_s_warm", "graphs", "graph_breaks", "recompiles", "peak_mb",
            "max_rel_err", "recompiles_second_pass", "second_pass_ms"}
WORKLOADS = {"pointwise", "softmax", "layernorm", "matmul", "mlp", "resnet18", "bert", "gpt2",
             "bert-dynamic", "resnet18-dynamic", "numpy", "overhead"}


def main():
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    problems = [f"machine lacks {k}" for k in sorted(MACHINE_KEYS - set(doc["machine"]))]
    for row in doc["results"]:
        name = f"{row.get('workload')} {row.get('phase')} {row.get('mode')}"
        problems += [f"{name}: no key {k}" for k in sorted(ROW_KEYS - set(row))]
        if not row.get("matches"):
            problems.append(f"{name}: compiled does not match eager (max_rel_err "
                            f"{row.get('max_rel_err')}, error {row.get('error')})")
        if row.get("workload") in ("bert-dynamic", "resnet18-dynamic") and (
                row.get("recompiles") != 1 or row.get("recompiles_second_pass") != 0):
            problems.append(f"{name}: {row.get('recompiles')} recompiles in the first pass and "
                            f"{row.get('recompiles_second_pass')} in the second (want 1 and 0)")
    seen = {row.get("workload") for row in doc["results"]}
    problems += [f"no row for {w}" for w in sorted(WORKLOADS - seen)]
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
