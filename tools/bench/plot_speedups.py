#!/usr/bin/env python3
"""Draws kiln_bench's speedups (eager ms / compiled ms) as bars per workload and phase, one bar
per compile mode, like the charts of PyTorch 2.0's announcement.

    python3 tools/bench/plot_speedups.py results.json speedups.png

Needs matplotlib (Debian: apt-get install python3-matplotlib). kiln_bench --plot runs it.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    rows = [r for r in doc["results"] if r.get("speedup") is not None]
    if not rows:
        print("plot_speedups: no row has a speedup", file=sys.stderr)
        return 1
    labels = []
    for r in rows:
        label = r["workload"] + ("" if r["phase"] == "inference" else f"\n{r['phase']}")
        if label not in labels:
            labels.append(label)
    modes = []
    for r in rows:
        if r["mode"] not in modes:
            modes.append(r["mode"])
    width = 0.8 / len(modes)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(labels) + 2), 4.5))
    for i, mode in enumerate(modes):
        xs, ys = [], []
        for r in rows:
            if r["mode"] != mode:
                continue
            label = r["workload"] + ("" if r["phase"] == "inference" else f"\n{r['phase']}")
            xs.append(labels.index(label) + (i - (len(modes) - 1) / 2) * width)
            ys.append(r["speedup"])
        bars = ax.bar(xs, ys, width, label=str(mode))
        ax.bar_label(bars, labels=[f"{y:.2f}x" for y in ys], fontsize=7, padding=2)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("speedup over eager kiln (higher is better)")
    m = doc.get("machine", {})
    ax.set_title(f"kiln.compile speedups, {m.get('cpu', '?')}, {m.get('threads', '?')} threads\n"
                 f"kiln {m.get('kiln_commit', '?')}, {m.get('date', '?')}", fontsize=9)
    if len(modes) > 1:
        ax.legend(title="mode", fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
