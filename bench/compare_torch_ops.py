#!/usr/bin/env python3
"""Times kiln and PyTorch eager side by side on the neural-network op benchmarks of issue 3.

The cases are BENCHMARKS.md's op-level workloads: matmul 1024^3, the model workloads' linear
layers, conv2d at ResNet-18's layer
shapes (batch 8), softmax / log_softmax / layer_norm / rms_norm on (2048, 4096), batch_norm and
max_pool2d at ResNet's stem shapes, scaled_dot_product_attention at BERT-base shapes, and
cross_entropy on (4096, 1000), all float32. Each case runs one benchmark of a kiln Google
Benchmark binary (bench/bench_*.cpp) and the same call in PyTorch in this process, alternating per
round (odd rounds PyTorch first); tables show medians over rounds. See side_by_side.py.

    python3 bench/compare_torch_ops.py --threads 1,2 --json perf_ops.json
    python3 bench/compare_torch_ops.py --cases 'conv2d/*' --threads 2
"""
import argparse
import fnmatch
import json
import os
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable, Optional

from side_by_side import (ensure_malloc_tunables, import_torch, kiln_measure, machine_line,
                          print_torch_config, torch_measure)


@dataclass
class Case:
    name: str                 # how the table shows it
    binary: str               # kiln benchmark executable in the bench build dir
    kiln: str                 # the kiln benchmark's name up to its thread-count suffix
    setup: Callable           # setup(torch) -> zero-argument callable doing one PyTorch call
    flops: Optional[float] = None  # for a GFLOP/s column


def mm_case():
    def setup(torch):
        a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
        return lambda: torch.mm(a, b)
    return Case("mm/1024x1024x1024", "bench_matmul", "mm/contiguous", setup, 2.0 * 1024**3)


# Linear layers of the model workloads: (m, n, k) for x [m, k] @ weight [n, k]^T + bias [n].
LINEAR_SHAPES = [(64, 1024, 1024), (512, 768, 768), (512, 3072, 768), (512, 768, 3072),
                 (256, 2304, 768)]


def linear_case(m, n, k):
    def setup(torch):
        x, w, b = torch.randn(m, k), torch.randn(n, k), torch.randn(n)
        return lambda: torch.nn.functional.linear(x, w, b)
    return Case(f"linear/{m}x{n}x{k}", "bench_matmul", f"linear/m:{m}/n:{n}/k:{k}", setup,
                2.0 * m * n * k)


# ResNet-18's convolutions at batch 8: name -> (C_in, C_out, kernel, stride, padding, H = W).
RESNET18_CONVS = {
    "conv1_7x7_s2": (3, 64, 7, 2, 3, 224),
    "layer1_3x3": (64, 64, 3, 1, 1, 56),
    "layer2_3x3_s2": (64, 128, 3, 2, 1, 56),
    "layer2_3x3": (128, 128, 3, 1, 1, 28),
    "layer2_downsample_1x1_s2": (64, 128, 1, 2, 0, 56),
    "layer3_3x3_s2": (128, 256, 3, 2, 1, 28),
    "layer3_3x3": (256, 256, 3, 1, 1, 14),
    "layer4_3x3_s2": (256, 512, 3, 2, 1, 14),
    "layer4_3x3": (512, 512, 3, 1, 1, 7),
}


def conv_case(name, shape, channels_last=False):
    cin, cout, k, s, p, hw = shape
    out = (hw + 2 * p - k) // s + 1
    flops = 2.0 * 8 * cout * out * out * cin * k * k

    def setup(torch):
        x = torch.randn(8, cin, hw, hw)
        w = torch.randn(cout, cin, k, k)
        b = torch.randn(cout)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        return lambda: torch.nn.functional.conv2d(x, w, b, stride=s, padding=p)
    suffix = "_channels_last" if channels_last else ""
    return Case(f"conv2d/{name}{suffix}", "bench_conv", f"BM_conv2d/{name}{suffix}", setup, flops)


def rowwise_case(op, binary):
    def setup(torch):
        F = torch.nn.functional
        x = torch.randn(2048, 4096)
        w, b = torch.randn(4096), torch.randn(4096)
        return {
            "softmax": lambda: torch.softmax(x, -1),
            "log_softmax": lambda: torch.log_softmax(x, -1),
            "layer_norm": lambda: F.layer_norm(x, (4096,), w, b),
            "rms_norm": lambda: F.rms_norm(x, (4096,), w),
        }[op]
    return Case(f"{op}/2048x4096", binary, f"BM_{op}/2048x4096", setup)


def batch_norm_case():
    def setup(torch):
        x = torch.randn(8, 64, 56, 56)
        w, b = torch.randn(64), torch.randn(64)
        rm, rv = torch.zeros(64), torch.ones(64)
        return lambda: torch.nn.functional.batch_norm(x, rm, rv, w, b, training=True)
    return Case("batch_norm/8x64x56x56", "bench_norm", "BM_batch_norm/8x64x56x56", setup)


def max_pool_case():
    def setup(torch):
        x = torch.randn(8, 64, 112, 112)
        return lambda: torch.nn.functional.max_pool2d(x, 3, 2, 1)
    return Case("max_pool2d/8x64x112x112", "bench_norm", "BM_max_pool2d/8x64x112x112", setup)


def sdpa_case(name, batch, heads, seq, dim, causal):
    # Two products of (seq x seq x dim) per head: q k^T and p v.
    flops = 4.0 * batch * heads * seq * seq * dim / (2 if causal else 1)

    def setup(torch):
        q, k, v = (torch.randn(batch, heads, seq, dim) for _ in range(3))
        F = torch.nn.functional
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return Case(f"sdpa/{name}", "bench_attention", f"BM_sdpa/{name}", setup, flops)


def cross_entropy_case():
    def setup(torch):
        x = torch.randn(4096, 1000)
        y = torch.randint(0, 1000, (4096,))
        return lambda: torch.nn.functional.cross_entropy(x, y)
    return Case("cross_entropy/4096x1000", "bench_softmax_loss", "BM_cross_entropy/4096x1000",
                setup)


CASES = ([mm_case()]
         + [linear_case(*shape) for shape in LINEAR_SHAPES]
         + [conv_case(n, s) for n, s in RESNET18_CONVS.items()]
         + [conv_case("layer1_3x3", RESNET18_CONVS["layer1_3x3"], channels_last=True)]
         + [rowwise_case("softmax", "bench_softmax_loss"),
            rowwise_case("log_softmax", "bench_softmax_loss"),
            rowwise_case("layer_norm", "bench_norm"), rowwise_case("rms_norm", "bench_norm"),
            batch_norm_case(), max_pool_case(),
            sdpa_case("bert_base", 4, 12, 128, 64, False),
            sdpa_case("bert_base_causal", 4, 12, 128, 64, True),
            sdpa_case("long_2048", 1, 12, 2048, 64, False),
            sdpa_case("long_2048_causal", 1, 12, 2048, 64, True),
            cross_entropy_case()])


def list_benchmarks(binary):
    out = subprocess.run([binary, "--benchmark_list_tests"], capture_output=True, text=True,
                         check=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def resolve(names, prefix, threads):
    """The benchmark called prefix with a thread-count suffix (/t:N, /threads:N or /N)."""
    pattern = re.compile(re.escape(prefix) + rf"/(t:|threads:)?{threads}(/real_time)?$")
    for name in names:
        if pattern.match(name):
            return name.removesuffix("/real_time")
    return None


def main():
    ensure_malloc_tunables()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench-dir", default="build/bench", help="kiln benchmark binaries")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--cases", default="*", help="comma-separated glob patterns of cases")
    parser.add_argument("--rounds", type=int, default=5, help="alternations of kiln and torch")
    parser.add_argument("--repetitions", type=int, default=5,
                        help="timed batches per measurement (median taken)")
    parser.add_argument("--min-time", type=float, default=0.1, help="seconds per timed batch")
    parser.add_argument("--json", help="write all measurements to this file")
    args = parser.parse_args()

    torch = import_torch()
    threads_list = [int(x) for x in args.threads.split(",")]
    patterns = args.cases.split(",")
    selected = [c for c in CASES if any(fnmatch.fnmatch(c.name, p) for p in patterns)]
    if not selected:
        parser.error(f"no case matches {args.cases}; cases: {', '.join(c.name for c in CASES)}")

    listed = {}
    plan = []  # (case, threads, kiln binary, kiln benchmark name)
    for case in selected:
        binary = os.path.join(args.bench_dir, case.binary)
        if not os.access(binary, os.X_OK):
            print(f"skipping {case.name}: {binary} is not built", file=sys.stderr)
            continue
        if binary not in listed:
            listed[binary] = list_benchmarks(binary)
        for n in threads_list:
            name = resolve(listed[binary], case.kiln, n)
            if name is None:
                print(f"skipping {case.name} t{n}: {binary} has no {case.kiln}/<{n} threads>",
                      file=sys.stderr)
                continue
            plan.append((case, n, binary, name))

    machine = machine_line(torch)
    print(f"machine: {machine}")
    print_torch_config(torch)
    print()

    kiln_ms = {(c.name, n): [] for c, n, _, _ in plan}
    torch_ms = {(c.name, n): [] for c, n, _, _ in plan}
    fns = {}
    with torch.inference_mode():
        torch.manual_seed(0)
        for r in range(args.rounds):
            for case, n, binary, name in plan:
                key = (case.name, n)
                torch.set_num_threads(n)
                if case.name not in fns:
                    fns[case.name] = case.setup(torch)

                def run_kiln():
                    kiln_ms[key].append(kiln_measure(binary, name, args.repetitions, args.min_time))

                def run_torch():
                    torch_ms[key].append(torch_measure(fns[case.name], args.repetitions,
                                                       args.min_time))

                for run in ((run_kiln, run_torch) if r % 2 == 0 else (run_torch, run_kiln)):
                    run()
                print(f"round {r + 1}/{args.rounds} {case.name} t{n}: kiln {kiln_ms[key][-1]:.3f}"
                      f" ms, torch {torch_ms[key][-1]:.3f} ms", file=sys.stderr)

    rows = []
    for case, n, _, name in plan:
        key = (case.name, n)
        k, t = statistics.median(kiln_ms[key]), statistics.median(torch_ms[key])
        row = {"case": case.name, "threads": n, "kiln_benchmark": name, "kiln_ms": k,
               "torch_ms": t, "ratio": k / t, "kiln_ms_rounds": kiln_ms[key],
               "torch_ms_rounds": torch_ms[key]}
        if case.flops:
            row["kiln_gflops"] = case.flops / (k * 1e-3) * 1e-9
            row["torch_gflops"] = case.flops / (t * 1e-3) * 1e-9
        rows.append(row)

    header = (f"{'case':<28} {'thr':>3} {'kiln ms':>9} {'torch ms':>9} {'kiln/torch':>10} "
              f"{'kiln GFLOP/s':>12} {'torch GFLOP/s':>13}")
    print(header)
    print("-" * len(header))
    for row in rows:
        gf = ""
        if "kiln_gflops" in row:
            gf = f" {row['kiln_gflops']:>12.1f} {row['torch_gflops']:>13.1f}"
        print(f"{row['case']:<28} {row['threads']:>3} {row['kiln_ms']:>9.3f} "
              f"{row['torch_ms']:>9.3f} {row['ratio']:>10.2f}{gf}")
    print(f"medians over {args.rounds} rounds; float32; kiln/torch < 1 means kiln is faster")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "torch_version": torch.__version__,
                       "rounds": args.rounds, "repetitions": args.repetitions,
                       "min_time_s": args.min_time, "results": rows}, f, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
