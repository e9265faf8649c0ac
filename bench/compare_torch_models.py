#!/usr/bin/env python3
"""Times kiln and PyTorch eager side by side on the model workloads of BENCHMARKS.md.

Workloads (CPU shapes, 2 threads): mlp (batch 64) and resnet18 (batch 8, 224x224) inference and
training step; bert (BERT-base, batch 4, seq 128) inference and training step; gpt2 (GPT-2 small,
batch 1, seq 256) inference. kiln runs one benchmark of the Google Benchmark binary bench_models
per measurement; PyTorch runs in this process on the same architecture with the same shapes:
an nn.Sequential MLP, torchvision's resnet18, Hugging Face's BertForSequenceClassification and
GPT2LMHeadModel (random init, attn_implementation="sdpa"). Training steps match kiln's
(bench/bench_models.cpp): zero_grad, forward, loss, backward, optimizer step. kiln and PyTorch
alternate per case and per round (odd rounds PyTorch first); the table shows medians over rounds.

PyTorch runs at its best (ANCHORS.md): glibc keeps freed memory (the script re-executes itself
with GLIBC_TUNABLES) and torch.set_num_threads(threads).

    python3 bench/compare_torch_models.py --json models.json
"""
import argparse
import datetime
import json
import os
import statistics
import sys

from side_by_side import (cpu_model, ensure_malloc_tunables, import_torch, kiln_measure,
                          kiln_revision, machine_line, print_torch_config, torch_measure)

CASES = [("mlp", "inference"), ("mlp", "train"), ("resnet18", "inference"),
         ("resnet18", "train"), ("bert", "inference"), ("bert", "train"), ("gpt2", "inference")]


# ---- PyTorch's side of each workload ----
# Each builder returns a TorchModel: the module (its forward takes `inputs` and returns one
# tensor), the inputs, and for training the target, loss and optimizer factory; `tiny` gives the
# tiny shapes of kiln_bench --shapes tiny. bench/compare_torch.py reuses them (eagerly,
# TorchScript and torch.compile).

class TorchModel:
    def __init__(self, model, inputs, target=None, loss=None, optimizer=None):
        self.model, self.inputs, self.target = model, inputs, target
        self.loss, self.optimizer = loss, optimizer

    def infer_fn(self, module):
        """One inference call of `module` (this model, compiled or scripted) on the inputs."""
        return lambda: module(*self.inputs)

    def train_fn(self, module):
        """One training step through `module` (sharing this model's parameters): zero_grad,
        forward, loss, backward, optimizer step; None when the workload has no training phase."""
        if self.loss is None:
            return None
        opt = self.optimizer(self.model.parameters())

        def step():
            opt.zero_grad(set_to_none=True)
            loss = self.loss(module(*self.inputs), self.target)
            loss.backward()
            opt.step()
            return loss
        return step


def hf_logits(torch, model):
    """A Hugging Face model as a module of input_ids returning its logits (traceable)."""
    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, input_ids):
            return self.inner(input_ids=input_ids).logits
    return Logits()


def torch_mlp(torch, tiny=False):
    nn = torch.nn
    width, batch = (32, 2) if tiny else (1024, 64)
    model = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, width), nn.GELU(),
                          nn.Linear(width, width))
    x, target = torch.randn(batch, width), torch.randn(batch, width)
    return TorchModel(model, (x,), target, torch.nn.functional.mse_loss,
                      lambda params: torch.optim.SGD(params, lr=0.01))


def torch_resnet18(torch, tiny=False):
    import torchvision
    if tiny:  # kiln_bench's tiny ResNet: one BasicBlock per stage, 10 classes, 2x3x32x32
        from torchvision.models.resnet import BasicBlock, ResNet
        model = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=10)
        x, labels = torch.randn(2, 3, 32, 32), torch.randint(0, 10, (2,))
    else:
        model = torchvision.models.resnet18(weights=None)
        x, labels = torch.randn(8, 3, 224, 224), torch.randint(0, 1000, (8,))
    return TorchModel(model, (x,), labels, torch.nn.functional.cross_entropy,
                      lambda params: torch.optim.SGD(params, lr=0.01, momentum=0.9))


def bert_config(transformers, tiny=False):
    # BERT-base defaults (dropout 0.1); the attention implementation is a config field.
    if tiny:
        return transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                       num_attention_heads=2, intermediate_size=64,
                                       max_position_embeddings=64, num_labels=2,
                                       attn_implementation="sdpa")
    return transformers.BertConfig(num_labels=2, attn_implementation="sdpa")


def torch_bert(torch, tiny=False):
    import transformers
    config = bert_config(transformers, tiny)
    model = transformers.BertForSequenceClassification(config)
    batch, seq = (1, 8) if tiny else (4, 128)
    ids, labels = torch.randint(0, config.vocab_size, (batch, seq)), torch.randint(0, 2, (batch,))
    # Hugging Face's loss for 2 labels is cross-entropy, as kiln's loss().
    return TorchModel(hf_logits(torch, model), (ids,), labels, torch.nn.functional.cross_entropy,
                      lambda params: torch.optim.AdamW(params, lr=2e-5))


def torch_gpt2(torch, tiny=False):
    import transformers
    if tiny:
        config = transformers.GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=2,
                                         n_head=2, attn_implementation="sdpa")
    else:
        config = transformers.GPT2Config(attn_implementation="sdpa")
    model = transformers.GPT2LMHeadModel(config)
    ids = torch.randint(0, config.vocab_size, (1, 8 if tiny else 256))
    return TorchModel(hf_logits(torch, model), (ids,))


BUILDERS = {"mlp": torch_mlp, "resnet18": torch_resnet18, "bert": torch_bert, "gpt2": torch_gpt2}


def torch_case_fn(torch, models, workload, phase):
    """A no-argument callable that runs one step of (workload, phase) in PyTorch."""
    if workload not in models:
        torch.manual_seed(0)
        models[workload] = BUILDERS[workload](torch)
    m = models[workload]
    if phase == "inference":
        infer = m.infer_fn(m.model)

        def run():
            m.model.eval()
            with torch.inference_mode():
                infer()
        return run
    # One optimizer per workload for the whole run (its state persists, as before).
    if (workload, "train") not in models:
        models[(workload, "train")] = m.train_fn(m.model)
    train = models[(workload, "train")]

    def run_train():
        m.model.train()
        train()
    return run_train


def main():
    ensure_malloc_tunables()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kiln-bench", default="build/bench/bench_models",
                        help="path of the kiln benchmark binary")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workloads", default="mlp,resnet18,bert,gpt2",
                        help="comma-separated workloads")
    parser.add_argument("--phases", default="inference,train", help="inference,train")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of kiln and torch")
    parser.add_argument("--repetitions", type=int, default=3,
                        help="timed batches per measurement (median taken)")
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds per timed batch")
    parser.add_argument("--json", help="write all measurements to this file")
    args = parser.parse_args()

    torch = import_torch()
    workloads, phases = args.workloads.split(","), args.phases.split(",")
    cases = [c for c in CASES if c[0] in workloads and c[1] in phases]
    if not cases:
        parser.error("no workload/phase selected")
    if not os.access(args.kiln_bench, os.X_OK):
        parser.error(f"{args.kiln_bench} is not an executable; build it with "
                     "cmake -DKILN_BUILD_BENCH=ON and ninja bench_models")
    torch.set_num_threads(args.threads)
    load = os.getloadavg()[0]
    machine = machine_line(torch)
    print(f"machine: {machine}")
    print(f"load average at start: {load:.2f}")
    print_torch_config(torch)
    print()

    kiln_ms = {case: [] for case in cases}
    torch_ms = {case: [] for case in cases}
    models = {}
    for r in range(args.rounds):
        for case in cases:
            workload, phase = case
            name = f"{workload}/{phase}/t:{args.threads}"
            torch_fn = torch_case_fn(torch, models, workload, phase)

            def run_kiln():
                kiln_ms[case].append(
                    kiln_measure(args.kiln_bench, name, args.repetitions, args.min_time))

            def run_torch():
                torch_ms[case].append(torch_measure(torch_fn, args.repetitions, args.min_time))

            for run in ((run_kiln, run_torch) if r % 2 == 0 else (run_torch, run_kiln)):
                run()
            print(f"round {r + 1}/{args.rounds} {name}: kiln {kiln_ms[case][-1]:.2f} ms, "
                  f"torch {torch_ms[case][-1]:.2f} ms", file=sys.stderr, flush=True)

    rows = []
    for workload, phase in cases:
        k = statistics.median(kiln_ms[(workload, phase)])
        t = statistics.median(torch_ms[(workload, phase)])
        # BENCHMARKS.md's result keys (eager only: compiled figures are null), plus PyTorch's.
        rows.append({"workload": workload, "device": "cpu", "phase": phase, "mode": None,
                     "eager_ms": k, "compiled_ms": None, "speedup": None,
                     "compile_s_cold": None, "compile_s_warm": None, "graphs": None,
                     "graph_breaks": None, "recompiles": None, "peak_mb": None,
                     "max_rel_err": None, "torch_eager_ms": t, "kiln_over_torch": k / t,
                     "kiln_ms_rounds": kiln_ms[(workload, phase)],
                     "torch_ms_rounds": torch_ms[(workload, phase)]})

    header = f"{'workload':<9} {'phase':<10} {'kiln ms':>10} {'torch ms':>10} {'kiln/torch':>10}"
    print(header)
    print("-" * len(header))
    for row in rows:
        print(f"{row['workload']:<9} {row['phase']:<10} {row['eager_ms']:>10.2f} "
              f"{row['torch_eager_ms']:>10.2f} {row['kiln_over_torch']:>10.2f}")
    load_end = os.getloadavg()[0]
    print(f"medians over {args.rounds} rounds, {args.threads} threads; "
          f"load average {load:.2f} at start, {load_end:.2f} at end")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": {"cpu": cpu_model(), "cores": os.cpu_count(),
                                   "threads": args.threads, "gpu": None,
                                   "date": datetime.datetime.now(datetime.timezone.utc)
                                   .isoformat(timespec="seconds"),
                                   "kiln_commit": kiln_revision(), "torch": torch.__version__,
                                   "load_average": [load, load_end], "description": machine},
                       "rounds": args.rounds, "repetitions": args.repetitions,
                       "min_time_s": args.min_time, "results": rows}, f, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
