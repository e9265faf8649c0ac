"""The Python module's workloads of ../shared/BENCHMARKS.md, side by side in one process:

  numpy     sum(sin(a)*cos(b) + exp(-a*a), axis=1) on two (4096, 4096) float32 arrays: numpy
            itself vs the same function through kiln.compile (numpy arrays in and out).
  overhead  a compiled function of one tiny op on a 16-element tensor: per-call time minus the
            eager op's, for kiln (and torch.compile when PyTorch is importable).

Runs interleave the contenders and report medians over repeats. PyTorch runs at its best
(ANCHORS.md: glibc keeps freed memory, threads set), as in the other side-by-side scripts.
  PYTHONPATH=build/python python bench/python_bench.py [--threads 2] [--size 4096] [--json F]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import side_by_side  # noqa: E402


def median_time(fn, repeats, inner=1):
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


def interleaved(contenders, repeats, inner):
    """Median seconds per call of each contender, alternating them round by round."""
    samples = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[name].append((time.perf_counter() - start) / inner)
    return {name: statistics.median(s) for name, s in samples.items()}


def numpy_workload(a, b):
    return np.sum(np.sin(a) * np.cos(b) + np.exp(-a * a), axis=1)


def bench_numpy(kiln, size, repeats):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    compiled = kiln.compile(numpy_workload)
    start = time.perf_counter()
    got = compiled(a, b)
    compile_s = time.perf_counter() - start
    err = float(np.max(np.abs(got - numpy_workload(a, b)) / (np.abs(numpy_workload(a, b)) + 1)))
    t = interleaved({"numpy": lambda: numpy_workload(a, b), "kiln": lambda: compiled(a, b)},
                    repeats, 1)
    return {"workload": "numpy", "numpy_ms": t["numpy"] * 1e3, "kiln_compiled_ms": t["kiln"] * 1e3,
            "speedup": t["numpy"] / t["kiln"], "first_call_s": compile_s, "max_rel_err": err}


def bench_overhead(kiln, repeats, inner):
    result = {"workload": "overhead"}
    if kiln is not None:
        x = kiln.randn(16)
        compiled = kiln.compile(lambda t: t + 1)
        compiled(x)
        t = interleaved({"eager": lambda: x + 1, "compiled": lambda: compiled(x)}, repeats, inner)
        result.update({"kiln_eager_us": t["eager"] * 1e6, "kiln_compiled_us": t["compiled"] * 1e6,
                       "kiln_overhead_us": (t["compiled"] - t["eager"]) * 1e6})
    try:
        import torch
        tx = torch.randn(16)
        tc = torch.compile(lambda t: t + 1)
        tc(tx)
        tt = interleaved({"eager": lambda: tx + 1, "compiled": lambda: tc(tx)}, repeats, inner)
        result.update({"torch_eager_us": tt["eager"] * 1e6, "torch_compiled_us": tt["compiled"] * 1e6,
                       "torch_overhead_us": (tt["compiled"] - tt["eager"]) * 1e6,
                       "torch_version": torch.__version__})
    except Exception as e:  # torch absent or torch.compile unavailable: kiln's figures alone
        result["torch_error"] = f"{type(e).__name__}: {e}"
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json")
    parser.add_argument("--torch-only", action="store_true",
                        help="torch.compile's overhead alone (a machine without kiln's module)")
    args = parser.parse_args()
    side_by_side.ensure_malloc_tunables()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    kiln = None
    if not args.torch_only:
        import kiln
        kiln.set_num_threads(args.threads)
    try:
        import torch
        torch.set_num_threads(args.threads)
        print("machine: " + side_by_side.machine_line(torch))
    except ImportError:
        print("machine: (no torch) " + side_by_side.cpu_model())
    results = [] if kiln is None else [bench_numpy(kiln, args.size, args.repeats)]
    results.append(bench_overhead(kiln, args.repeats, 2000))
    for r in results:
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "python": sys.version.split()[0],
                       "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
