#!/usr/bin/env python3
"""PyTorch's data-parallel training throughput, measured as tools/kiln_ddp_bench.cpp measures
kiln's: BENCHMARKS.md's resnet18 or bert training step at its GPU batch per rank (32 images,
16 sequences of 128 tokens; weak scaling), one rank per GPU through torchrun and
DistributedDataParallel (NCCL, PyTorch's defaults: 25 MB buckets), eager or torch.compile'd
(the model inside DDP, as PyTorch's DDPOptimizer expects), optionally under autocast. The models,
losses and optimizers are compare_torch_models.py's; float32 as kiln's (TF32 off), cudnn.benchmark
on. Rank 0 prints the median step time over rounds and the global samples per second.

    torchrun --nproc-per-node 2 bench/ddp_torch.py --workload resnet18 [--compiled]
    python3 bench/ddp_torch.py --workload resnet18          # one GPU, the model without DDP
"""
import argparse
import contextlib
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch_cuda import configure_torch, model_workload  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", choices=["resnet18", "bert"], default="resnet18")
    parser.add_argument("--compiled", action="store_true", help="torch.compile (default mode)")
    parser.add_argument("--autocast", choices=["none", "bfloat16", "float16"], default="none")
    parser.add_argument("--ddp-alone", action="store_true", help="DDP even with one rank")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="append rank 0's result as a JSON line to this file")
    args = parser.parse_args()

    import torch
    import torch.distributed as dist
    configure_torch(torch)
    distributed = "WORLD_SIZE" in os.environ
    rank, world, local_rank = 0, 1, 0
    if distributed:
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
        rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", local_rank)
    torch.manual_seed(0)
    m = model_workload(torch, args.workload, tiny=False)
    torch.manual_seed(1 + rank)  # this rank's own batch
    batch = m.inputs[0].shape[0]
    if args.workload == "resnet18":
        inputs = (torch.randn_like(m.inputs[0]),)
    else:
        inputs = (torch.randint_like(m.inputs[0], 0, m.model.inner.config.vocab_size),)
    model = m.model.to(device).train()
    inputs = tuple(t.to(device) for t in inputs)
    target = m.target.to(device)
    runner = model
    use_ddp = distributed and (world > 1 or args.ddp_alone)
    if use_ddp:
        runner = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    if args.compiled:
        runner = torch.compile(runner)
    opt = m.optimizer(model.parameters())
    dtype = None if args.autocast == "none" else getattr(torch, args.autocast)

    def step():
        opt.zero_grad(set_to_none=True)
        region = torch.autocast("cuda", dtype=dtype) if dtype else contextlib.nullcontext()
        with region:
            loss = m.loss(runner(*inputs), target)
        loss.backward()
        opt.step()

    start = time.perf_counter()
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    warmup_s = time.perf_counter() - start
    rounds = []
    for _ in range(args.rounds):
        if distributed:
            dist.barrier()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        torch.cuda.synchronize()
        rounds.append((time.perf_counter() - start) * 1000 / args.steps)
    ms = statistics.median(rounds)
    samples = batch * world * 1000 / ms
    if rank == 0:
        print(f"torch {torch.__version__}: {args.workload} train, cuda, {world} rank"
              f"{'' if world == 1 else 's'} ({'DDP' if use_ddp else 'no DDP'}), "
              f"{'compiled' if args.compiled else 'eager'}"
              f"{'' if dtype is None else ', autocast ' + args.autocast}: {ms:.2f} ms/step "
              f"(median of {args.rounds} rounds of {args.steps}), {samples:.1f} samples/s, "
              f"warm-up {warmup_s:.1f} s", flush=True)
        if args.json:
            row = {"side": "torch", "torch": torch.__version__, "workload": args.workload,
                   "device": "cuda", "world_size": world, "ddp": use_ddp,
                   "compiled": args.compiled, "autocast": args.autocast,
                   "batch_per_rank": batch, "step_ms": ms, "step_ms_rounds": rounds,
                   "samples_per_s": samples, "warmup_s": warmup_s}
            with open(args.json, "a") as f:
                f.write(json.dumps(row) + "\n")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
