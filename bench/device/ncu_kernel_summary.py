#!/usr/bin/env python3
"""Where the GPU time went, from Nsight Compute's per-kernel summary (`ncu --print-summary
per-kernel --metrics gpu__time_duration.sum`, as `run_cuda_tests.sh profile` writes it): one line
per kernel and launch configuration with its total time, launches and mean, largest first.

    python3 bench/device/ncu_kernel_summary.py LOG [LOG...] [--top N]
"""
import argparse
import re

HEADER = re.compile(r"  (\S.*?) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\), .*Invocations (\d+)")
METRIC = re.compile(r"\s+gpu__time_duration\.sum\s+(\S+)\s+([\d.,]+)\s+([\d.,]+)\s+([\d.,]+)")
MICROSECONDS = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}


def kernels(path):
    """(name, grid x block, launches, mean us) for each kernel configuration of one log."""
    rows, current = [], None
    with open(path, errors="replace") as log:
        for line in log:
            header = HEADER.match(line)
            if header:
                grid = "({},{},{})x({},{},{})".format(*header.group(2, 3, 4, 5, 6, 7))
                current = (header.group(1), grid, int(header.group(8)))
                continue
            metric = METRIC.match(line)
            if metric and current:
                # Columns: unit, minimum, maximum, average.
                mean = float(metric.group(4).replace(",", "")) * MICROSECONDS[metric.group(1)]
                rows.append((*current, mean))
                current = None
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    for path in args.logs:
        rows = kernels(path)
        total = sum(launches * mean for _, _, launches, mean in rows)
        print(f"== {path}: {sum(r[2] for r in rows)} launches of {len(rows)} kernel configurations, "
              f"{total / 1e3:.2f} ms of kernels")
        rows.sort(key=lambda r: -r[2] * r[3])
        for name, grid, launches, mean in rows[: args.top]:
            print(f"{launches * mean:10.1f} us {launches:5d} x {mean:8.1f} us  {grid:28s} {name[:100]}")


if __name__ == "__main__":
    main()
