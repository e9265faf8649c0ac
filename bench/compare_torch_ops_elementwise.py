#!/usr/bin/env python3
"""Times kiln and PyTorch eager side by side on the elementwise/reduction micro-benchmarks.

For each (threads, op, layout) the script runs one kiln measurement (the Google Benchmark binary
bench_elementwise, filtered to that one benchmark, JSON output) and one PyTorch measurement (in
this process, same shape, same thread count), back to back, and repeats the whole alternation
--rounds times; odd rounds measure PyTorch first. Drift of the machine (other jobs, frequency,
page cache) then hits both sides alike. Each single measurement is the median of --repetitions
timed batches; the table shows the median over rounds.

PyTorch runs at its best (see ANCHORS.md): freed memory is kept by glibc malloc (the script
re-executes itself with GLIBC_TUNABLES set when they are missing) and torch.set_num_threads(n).

    python3 bench/compare_torch_ops_elementwise.py --threads 1,2 --json perf.json
"""
import argparse
import json
import os
import statistics
import sys

from side_by_side import (ensure_malloc_tunables, import_torch, kiln_measure, machine_line,
                          print_torch_config, torch_measure)

SIDE = 2048  # the matrices are SIDE x SIDE float32 = 2^22 values
NUMEL = SIDE * SIDE
BYTES = NUMEL * 4

# op -> (PyTorch call on the operands a, b; bytes moved per call in units of one tensor)
OPS = {
    "add": (lambda t, a, b: t.add(a, b), 3),  # 2 reads + 1 write
    "mul": (lambda t, a, b: t.mul(a, b), 3),
    "exp": (lambda t, a, b: t.exp(a), 2),  # 1 read + 1 write
    "tanh": (lambda t, a, b: t.tanh(a), 2),
    "sum": (lambda t, a, b: t.sum(a), 1),  # 1 read
    "amax": (lambda t, a, b: t.amax(a), 1),
}
LAYOUTS = ("contiguous", "transposed")


def make_torch_inputs(torch, layout):
    gen = torch.Generator().manual_seed(0)
    a = torch.rand(SIDE, SIDE, generator=gen) * 2 - 1
    b = torch.rand(SIDE, SIDE, generator=gen) * 2 - 1
    return (a.t(), b.t()) if layout == "transposed" else (a, b)


def main():
    ensure_malloc_tunables()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kiln-bench", default="build/bench/bench_elementwise",
                        help="path of the kiln benchmark binary")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--ops", default=",".join(OPS), help="comma-separated ops")
    parser.add_argument("--layouts", default=",".join(LAYOUTS), help="contiguous,transposed")
    parser.add_argument("--rounds", type=int, default=5, help="alternations of kiln and torch")
    parser.add_argument("--repetitions", type=int, default=5,
                        help="timed batches per measurement (median taken)")
    parser.add_argument("--min-time", type=float, default=0.1,
                        help="seconds per timed batch")
    parser.add_argument("--json", help="write all measurements to this file")
    args = parser.parse_args()

    torch = import_torch()
    threads_list = [int(x) for x in args.threads.split(",")]
    ops = args.ops.split(",")
    layouts = args.layouts.split(",")
    for op in ops:
        if op not in OPS:
            parser.error(f"unknown op {op}; known: {', '.join(OPS)}")
    if not os.access(args.kiln_bench, os.X_OK):
        parser.error(f"{args.kiln_bench} is not an executable; build it with "
                     "cmake -DKILN_BUILD_BENCH=ON and ninja bench_elementwise")

    machine = machine_line(torch)
    print(f"machine: {machine}")
    print_torch_config(torch)
    print()

    # Every measured case: (threads, op, layout); op "memcpy" is the bandwidth reference (kiln:
    # std::memcpy over n threads; PyTorch: copy_ into a preallocated tensor).
    cases = [(n, "memcpy", "contiguous") for n in threads_list]
    cases += [(n, op, layout) for n in threads_list for op in ops for layout in layouts]
    kiln_ms = {case: [] for case in cases}
    torch_ms = {case: [] for case in cases}
    inputs = {layout: make_torch_inputs(torch, layout) for layout in layouts + ["contiguous"]}
    copy_dst = torch.empty(SIDE, SIDE)

    with torch.inference_mode():
        for r in range(args.rounds):
            for case in cases:
                n, op, layout = case
                torch.set_num_threads(n)
                a, b = inputs[layout]
                if op == "memcpy":
                    torch_fn = lambda: copy_dst.copy_(a)  # noqa: E731
                else:
                    torch_fn = lambda f=OPS[op][0], a=a, b=b: f(torch, a, b)  # noqa: E731
                name = f"{op}/{layout}/t{n}"

                def run_kiln():
                    kiln_ms[case].append(
                        kiln_measure(args.kiln_bench, name, args.repetitions, args.min_time))

                def run_torch():
                    torch_ms[case].append(torch_measure(torch_fn, args.repetitions,
                                                        args.min_time))

                for run in ((run_kiln, run_torch) if r % 2 == 0 else (run_torch, run_kiln)):
                    run()
                print(f"round {r + 1}/{args.rounds} {name}: kiln {kiln_ms[case][-1]:.3f} ms, "
                      f"torch {torch_ms[case][-1]:.3f} ms", file=sys.stderr)

    rows = []
    for case in cases:
        n, op, layout = case
        k, t = statistics.median(kiln_ms[case]), statistics.median(torch_ms[case])
        row = {"op": op, "layout": layout, "threads": n, "kiln_ms": k, "torch_ms": t,
               "ratio": k / t, "kiln_ms_rounds": kiln_ms[case], "torch_ms_rounds": torch_ms[case]}
        if op == "add":
            # Fraction of memcpy bandwidth reached: bytes moved per second by add over the bytes
            # per second of the kiln memcpy (1 read + 1 write) on the same thread count.
            memcpy_ms = statistics.median(kiln_ms[(n, "memcpy", "contiguous")])
            memcpy_bw = 2 * BYTES / memcpy_ms
            row["kiln_memcpy_fraction"] = (3 * BYTES / k) / memcpy_bw
            row["torch_memcpy_fraction"] = (3 * BYTES / t) / memcpy_bw
        rows.append(row)

    header = (f"{'op':<7} {'layout':<11} {'thr':>3} {'kiln ms':>9} {'torch ms':>9} "
              f"{'kiln/torch':>10} {'kiln bw/memcpy':>14} {'torch bw/memcpy':>15}")
    print(header)
    print("-" * len(header))
    for row in rows:
        frac = ""
        if "kiln_memcpy_fraction" in row:
            frac = (f" {row['kiln_memcpy_fraction']:>14.2f} "
                    f"{row['torch_memcpy_fraction']:>15.2f}")
        op = row["op"] + ("*" if row["op"] == "memcpy" else "")
        print(f"{op:<7} {row['layout']:<11} {row['threads']:>3} {row['kiln_ms']:>9.3f} "
              f"{row['torch_ms']:>9.3f} {row['ratio']:>10.2f}{frac}")
    print("* memcpy: kiln = std::memcpy split over the threads; torch = copy_ into a "
          "preallocated tensor")
    print(f"medians over {args.rounds} rounds; shapes {SIDE}x{SIDE} float32 (2^22 values)")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "torch_version": torch.__version__,
                       "rounds": args.rounds, "repetitions": args.repetitions,
                       "min_time_s": args.min_time, "shape": [SIDE, SIDE], "dtype": "float32",
                       "results": rows}, f, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
