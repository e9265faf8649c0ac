#!/usr/bin/env python3
"""Writes reference_values.inc: PyTorch's results for the optimizer and scheduler tests.

Run from the repository root with a Python that has torch:
    python3 tests/optim/make_reference_values.py > tests/optim/reference_values.inc
Each optimizer case runs three steps of torch.optim (CPU, float32, the single-tensor path) on a
fixed 2x3 parameter with fixed gradients and records the parameter after every step. Each
scheduler case records get_last_lr() after construction and after each of N steps.
"""
import math

import torch

P0 = [[0.5, -1.2, 2.0], [0.3, 0.0, -0.7]]
GRADS = [
    [[0.1, -0.2, 0.3], [0.4, -0.5, 0.05]],
    [[-0.3, 0.25, 0.6], [0.2, 0.1, -0.4]],
    [[0.05, -0.02, 0.01], [-0.03, 0.04, 0.002]],  # small: exercises amsgrad's max
]

# (case name, torch class, torch kwargs, C++ optimizer expression over `p`)
OPTIMIZERS = [
    ("SGD plain", torch.optim.SGD, dict(lr=0.1), "SGD(p, {.lr = 0.1})"),
    ("SGD momentum", torch.optim.SGD, dict(lr=0.1, momentum=0.9),
     "SGD(p, {.lr = 0.1, .momentum = 0.9})"),
    ("SGD dampening", torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.3),
     "SGD(p, {.lr = 0.1, .momentum = 0.9, .dampening = 0.3})"),
    ("SGD nesterov", torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True),
     "SGD(p, {.lr = 0.1, .momentum = 0.9, .nesterov = true})"),
    ("SGD weight_decay", torch.optim.SGD, dict(lr=0.1, weight_decay=0.05),
     "SGD(p, {.lr = 0.1, .weight_decay = 0.05})"),
    ("SGD maximize", torch.optim.SGD, dict(lr=0.1, maximize=True),
     "SGD(p, {.lr = 0.1, .maximize = true})"),
    ("SGD momentum maximize", torch.optim.SGD, dict(lr=0.1, momentum=0.8, maximize=True),
     "SGD(p, {.lr = 0.1, .momentum = 0.8, .maximize = true})"),
    ("SGD everything", torch.optim.SGD,
     dict(lr=0.1, momentum=0.9, weight_decay=0.05, nesterov=True, maximize=True),
     "SGD(p, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.05, .nesterov = true, "
     ".maximize = true})"),
    ("SGD momentum weight_decay dampening", torch.optim.SGD,
     dict(lr=0.05, momentum=0.7, dampening=0.5, weight_decay=0.1),
     "SGD(p, {.lr = 0.05, .momentum = 0.7, .dampening = 0.5, .weight_decay = 0.1})"),
    ("Adam default", torch.optim.Adam, dict(), "Adam(p)"),
    ("Adam lr", torch.optim.Adam, dict(lr=0.1, betas=(0.8, 0.9), eps=1e-3),
     "Adam(p, {.lr = 0.1, .betas = {0.8, 0.9}, .eps = 1e-3})"),
    ("Adam weight_decay", torch.optim.Adam, dict(lr=0.1, weight_decay=0.1),
     "Adam(p, {.lr = 0.1, .weight_decay = 0.1})"),
    ("Adam amsgrad", torch.optim.Adam, dict(lr=0.1, amsgrad=True),
     "Adam(p, {.lr = 0.1, .amsgrad = true})"),
    ("Adam maximize", torch.optim.Adam, dict(lr=0.1, maximize=True),
     "Adam(p, {.lr = 0.1, .maximize = true})"),
    ("Adam everything", torch.optim.Adam,
     dict(lr=0.1, weight_decay=0.1, amsgrad=True, maximize=True),
     "Adam(p, {.lr = 0.1, .weight_decay = 0.1, .amsgrad = true, .maximize = true})"),
    ("AdamW default", torch.optim.AdamW, dict(), "AdamW(p)"),
    ("AdamW lr", torch.optim.AdamW, dict(lr=0.1, weight_decay=0.2),
     "AdamW(p, {.lr = 0.1, .weight_decay = 0.2})"),
    ("AdamW amsgrad", torch.optim.AdamW, dict(lr=0.1, amsgrad=True),
     "AdamW(p, {.lr = 0.1, .amsgrad = true})"),
    ("AdamW maximize", torch.optim.AdamW, dict(lr=0.1, weight_decay=0.2, maximize=True),
     "AdamW(p, {.lr = 0.1, .weight_decay = 0.2, .maximize = true})"),
    ("RMSprop default", torch.optim.RMSprop, dict(), "RMSprop(p)"),
    ("RMSprop alpha", torch.optim.RMSprop, dict(lr=0.05, alpha=0.9, eps=1e-4),
     "RMSprop(p, {.lr = 0.05, .alpha = 0.9, .eps = 1e-4})"),
    ("RMSprop weight_decay", torch.optim.RMSprop, dict(lr=0.05, weight_decay=0.1),
     "RMSprop(p, {.lr = 0.05, .weight_decay = 0.1})"),
    ("RMSprop momentum", torch.optim.RMSprop, dict(lr=0.05, momentum=0.9),
     "RMSprop(p, {.lr = 0.05, .momentum = 0.9})"),
    ("RMSprop centered", torch.optim.RMSprop, dict(lr=0.05, centered=True),
     "RMSprop(p, {.lr = 0.05, .centered = true})"),
    ("RMSprop maximize", torch.optim.RMSprop, dict(lr=0.05, maximize=True),
     "RMSprop(p, {.lr = 0.05, .maximize = true})"),
    ("RMSprop everything", torch.optim.RMSprop,
     dict(lr=0.05, weight_decay=0.1, momentum=0.9, centered=True, maximize=True),
     "RMSprop(p, {.lr = 0.05, .weight_decay = 0.1, .momentum = 0.9, .centered = true, "
     ".maximize = true})"),
]


def make_unique(cpp):
    """`X(args, {.a = 1})` -> `std::make_unique<X>(args, XOptions{.a = 1})`."""
    cls, args = cpp.split("(", 1)
    return f"std::make_unique<{cls}>({args.replace(', {.', f', {cls}Options{{.')}"


def fmt(values):
    return "{" + ", ".join(repr(float(v)) for v in values) + "}"


def optimizer_cases():
    out = []
    for name, cls, kwargs, cpp in OPTIMIZERS:
        p = torch.tensor(P0, dtype=torch.float32, requires_grad=True)
        opt = cls([p], **kwargs)
        steps = []
        for g in GRADS:
            p.grad = torch.tensor(g, dtype=torch.float32)
            opt.step()
            steps.append(fmt(p.detach().flatten().tolist()))
        out.append(f'    {{"{name}", [](std::vector<Tensor> p) -> std::unique_ptr<Optimizer> '
                   f'{{ return {make_unique(cpp)}; }},\n'
                   f'     {{{", ".join(steps)}}}}},')
    return out


class Dummy(torch.nn.Module):
    pass


# (case name, optimizer kind, C++ scheduler expression over `opt`, torch factory, steps)
SCHEDULERS = [
    ("StepLR", "SGD", "StepLR(opt, 3, 0.5)",
     lambda o: torch.optim.lr_scheduler.StepLR(o, 3, 0.5), 10),
    ("MultiStepLR", "SGD", "MultiStepLR(opt, std::vector<int64_t>{6, 2, 6, 9}, 0.3)",
     lambda o: torch.optim.lr_scheduler.MultiStepLR(o, [6, 2, 6, 9], 0.3), 11),
    ("CosineAnnealingLR", "SGD", "CosineAnnealingLR(opt, 4, 0.01)",
     lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 4, 0.01), 14),
    ("LinearLR", "SGD", "LinearLR(opt, 0.25, 0.9, 4)",
     lambda o: torch.optim.lr_scheduler.LinearLR(o, 0.25, 0.9, 4), 7),
    ("LinearLR default", "SGD", "LinearLR(opt)",
     lambda o: torch.optim.lr_scheduler.LinearLR(o), 7),
    ("LambdaLR", "SGD", "LambdaLR(opt, [](int64_t e) { return 1.0 / (1.0 + e); })",
     lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda e: 1.0 / (1.0 + e)), 5),
    ("OneCycleLR cos", "SGD", "OneCycleLR(opt, 0.8, 10)",
     lambda o: torch.optim.lr_scheduler.OneCycleLR(o, 0.8, total_steps=10), 9),
    ("OneCycleLR linear", "SGD",
     'OneCycleLR(opt, 0.8, 10, {.pct_start = 0.25, .anneal_strategy = "linear"})',
     lambda o: torch.optim.lr_scheduler.OneCycleLR(o, 0.8, total_steps=10, pct_start=0.25,
                                                   anneal_strategy="linear"), 10),
    ("OneCycleLR three_phase", "SGD",
     "OneCycleLR(opt, 0.8, 12, {.div_factor = 10, .final_div_factor = 100, .three_phase = true})",
     lambda o: torch.optim.lr_scheduler.OneCycleLR(o, 0.8, total_steps=12, div_factor=10,
                                                   final_div_factor=100, three_phase=True), 11),
    ("OneCycleLR Adam", "Adam", "OneCycleLR(opt, 0.01, 8, {.base_momentum = 0.8})",
     lambda o: torch.optim.lr_scheduler.OneCycleLR(o, 0.01, total_steps=8, base_momentum=0.8), 7),
]


def scheduler_cases():
    out = []
    for name, kind, cpp, make, steps in SCHEDULERS:
        p = torch.zeros(2, requires_grad=True)
        opt = torch.optim.SGD([p], lr=0.2) if kind == "SGD" else torch.optim.Adam([p], lr=0.2)
        sched = make(opt)
        mom_key = "momentum" if kind == "SGD" else "betas"

        def momentum():
            m = opt.param_groups[0][mom_key]
            return m if kind == "SGD" else m[0]

        lrs, moms = [sched.get_last_lr()[0]], [momentum()]
        for _ in range(steps):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr()[0])
            moms.append(momentum())
        out.append(f'    {{"{name}", "{kind}", [](Optimizer& opt) -> std::unique_ptr<LRScheduler> '
                   f'{{ return {make_unique(cpp)}; }},\n'
                   f'     {fmt(lrs)},\n     {fmt(moms)}}},')
    return out


def param_group_case():
    a = torch.tensor([1.0, -2.0], requires_grad=True)
    b = torch.tensor([0.5, 0.25, -1.0], requires_grad=True)
    opt = torch.optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5, "weight_decay": 0.1}],
                           lr=0.1)
    for ga, gb in [([0.3, -0.1], [0.2, 0.0, -0.4]), ([0.1, 0.2], [-0.3, 0.5, 0.1])]:
        a.grad = torch.tensor(ga)
        b.grad = torch.tensor(gb)
        opt.step()
    sd = opt.state_dict()
    return [f"inline const std::vector<double> kGroupsA = {fmt(a.detach().tolist())};",
            f"inline const std::vector<double> kGroupsB = {fmt(b.detach().tolist())};",
            f"inline const std::vector<double> kGroupsBExpAvgSq = "
            f"{fmt(sd['state'][1]['exp_avg_sq'].tolist())};"]


def clip_cases():
    out = []
    g1 = torch.tensor([[0.3, -4.0], [1.5, 2.0]])
    g2 = torch.tensor([-0.5, 3.0, 0.25])
    for norm_type, max_norm in [(2.0, 1.0), (1.0, 2.5), (math.inf, 1.0), (3.0, 100.0)]:
        a = torch.zeros(2, 2, requires_grad=True)
        b = torch.zeros(3, requires_grad=True)
        a.grad, b.grad = g1.clone(), g2.clone()
        total = torch.nn.utils.clip_grad_norm_([a, b], max_norm, norm_type)
        nt = "std::numeric_limits<double>::infinity()" if math.isinf(norm_type) else repr(norm_type)
        out.append(f"    {{{nt}, {max_norm!r}, {float(total)!r}, {fmt(a.grad.flatten().tolist())}, "
                   f"{fmt(b.grad.tolist())}}},")
    return out


print("// Generated by tests/optim/make_reference_values.py with torch", torch.__version__,
      "- do not edit.")
print("// clang-format off")
print("inline const std::vector<double> kP0 = " + fmt(sum(P0, [])) + ";")
print("inline const std::vector<std::vector<double>> kGrads = {" +
      ", ".join(fmt(sum(g, [])) for g in GRADS) + "};")
print("inline const std::vector<OptimizerCase> kOptimizerCases = {")
print("\n".join(optimizer_cases()))
print("};")
print("inline const std::vector<SchedulerCase> kSchedulerCases = {")
print("\n".join(scheduler_cases()))
print("};")
print("\n".join(param_group_case()))
print("inline const std::vector<ClipCase> kClipCases = {")
print("\n".join(clip_cases()))
print("};")
print("// clang-format on")
