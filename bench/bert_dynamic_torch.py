#!/usr/bin/env python3
"""PyTorch's side of kiln_dynamic_lengths: BERT inference (Hugging Face, BERT-base, batch 2) over
the nine sequence lengths of BENCHMARKS.md's bert-dynamic in turn. torch.compile with its default
options (static first, then automatic dynamic) runs a first pass, whose compilations and time
are counted; then per length, medians of eager and of torch.compile's second pass, interleaved.
PyTorch runs at its best (ANCHORS.md): glibc's malloc tunables, torch.set_num_threads.

    python3 bench/bert_dynamic_torch.py --threads 2 --json torch_lengths.json
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch_models import bert_config, hf_logits  # noqa: E402
from side_by_side import ensure_malloc_tunables  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--shapes", choices=["full", "tiny"], default="full")
    parser.add_argument("--json")
    args = parser.parse_args()
    ensure_malloc_tunables()
    import torch
    import transformers
    torch.set_num_threads(args.threads)
    tiny = args.shapes == "tiny"
    lengths = [4, 8, 12] if tiny else [16, 40, 64, 100, 128, 200, 256, 384, 512]
    batch = 1 if tiny else 2
    torch.manual_seed(0)
    config = bert_config(transformers, tiny)
    model = hf_logits(torch, transformers.BertForSequenceClassification(config)).eval()
    ids = [torch.randint(0, config.vocab_size, (batch, n)) for n in lengths]
    compiled = torch.compile(model)
    from torch._dynamo.utils import counters
    counters.clear()
    first = []
    with torch.no_grad():
        for x in ids:
            start = time.perf_counter()
            compiled(x)
            first.append(time.perf_counter() - start)
    graphs = counters["stats"]["unique_graphs"]
    print(f"torch {torch.__version__}, {args.threads} threads, batch {batch}")
    print(f"first pass: {graphs} compilations, {sum(first):.1f} s")
    print(f"{'length':>6} {'eager':>10} {'compiled':>10} {'eager/compiled':>14}")
    rows = []
    before = counters["stats"]["unique_graphs"]
    for n, x in zip(lengths, ids):
        times = {"eager": [], "compiled": []}
        with torch.no_grad():
            compiled(x)
            for _ in range(args.repeats):
                for name, fn in (("eager", model), ("compiled", compiled)):
                    start = time.perf_counter()
                    fn(x)
                    times[name].append((time.perf_counter() - start) * 1e3)
        eager, comp = statistics.median(times["eager"]), statistics.median(times["compiled"])
        print(f"{n:>6} {eager:>10.2f} {comp:>10.2f} {eager / comp:>14.3f}")
        rows.append({"length": n, "eager_ms": eager, "compiled_ms": comp})
    second = counters["stats"]["unique_graphs"] - before
    print(f"second pass: {second} compilations")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "threads": args.threads, "batch": batch,
                       "first_pass_compilations": graphs, "first_pass_s": sum(first),
                       "second_pass_compilations": second, "lengths": rows}, f, indent=2)


if __name__ == "__main__":
    main()
