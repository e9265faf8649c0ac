"""kiln.optim from Python against torch.optim: each optimizer's updates over a few steps, param
groups (per-group options, live edits, add_param_group), state and state dicts, training a
Python kiln.nn.Module, and the LR schedulers' rates."""
import numpy as np
import pytest

import kiln
import kiln.nn as nn
import kiln.optim as optim

torch = pytest.importorskip("torch")


def k(t):
    return kiln.tensor(t.detach().numpy())


def close(kv, tv, atol=1e-5, rtol=1e-5):
    np.testing.assert_allclose(kv.detach().numpy(), tv.detach().numpy(), atol=atol, rtol=rtol)


def param_pair(seed=0, shapes=((3, 4), (4,))):
    gen = torch.Generator().manual_seed(seed)
    values = [torch.randn(*s, generator=gen) for s in shapes]
    return ([torch.nn.Parameter(v.clone()) for v in values],
            [nn.Parameter(k(v)) for v in values])


def loss_of(params, lib, step):
    """A smooth loss whose gradients change from step to step."""
    w, b = params
    x = lib.ones(2, 3) * (step + 1) * 0.1 if lib is torch else kiln.ones(2, 3) * (step + 1) * 0.1
    out = (x @ w + b).tanh()
    return (out * out).sum() + (w * w).sum() * 0.01


def run_both(make, steps=5, seed=0, zero_grad_kwargs=None):
    tparams, kparams = param_pair(seed)
    topt, kopt = make(torch.optim, tparams), make(optim, kparams)
    for step in range(steps):
        for opt, params, lib in ((topt, tparams, torch), (kopt, kparams, kiln)):
            opt.zero_grad(**(zero_grad_kwargs or {}))
            loss_of(params, lib, step).backward()
            opt.step()
        for tp, kp in zip(tparams, kparams):
            close(kp, tp)
    return topt, kopt, tparams, kparams


OPTIMIZERS = [
    ("SGD", lambda o, p: o.SGD(p, lr=0.1)),
    ("SGD_momentum", lambda o, p: o.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01,
                                        dampening=0.1)),
    ("SGD_nesterov", lambda o, p: o.SGD(p, lr=0.05, momentum=0.8, nesterov=True,
                                        maximize=True)),
    ("Adam", lambda o, p: o.Adam(p, lr=0.01)),
    ("Adam_amsgrad", lambda o, p: o.Adam(p, lr=0.02, betas=(0.8, 0.9), weight_decay=0.1,
                                         amsgrad=True)),
    ("AdamW", lambda o, p: o.AdamW(p, lr=0.01)),
    ("AdamW_opts", lambda o, p: o.AdamW(p, lr=0.03, eps=1e-6, weight_decay=0.5, amsgrad=True)),
    ("RMSprop", lambda o, p: o.RMSprop(p, lr=0.01)),
    ("RMSprop_centered", lambda o, p: o.RMSprop(p, lr=0.01, alpha=0.9, momentum=0.5,
                                                centered=True, weight_decay=0.1)),
]


@pytest.mark.parametrize("name,make", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_optimizer_matches_torch(name, make):
    topt, kopt, tparams, kparams = run_both(make)
    tstate, kstate = topt.state_dict(), kopt.state_dict()
    assert kstate["param_groups"][0]["params"] == [0, 1]
    for key, value in kstate["param_groups"][0].items():
        assert value == pytest.approx(tstate["param_groups"][0][key]), key
    for index, entries in tstate["state"].items():
        entries = {key: v for key, v in entries.items() if v is not None}  # SGD without momentum
        assert set(kstate["state"].get(index, {})) == set(entries)
        for key, value in entries.items():
            close(kstate["state"][index][key], value)
    if kstate["state"]:
        assert set(kopt.state[kparams[0]]) == set(topt.state[tparams[0]])


def test_zero_grad_modes():
    run_both(lambda o, p: o.SGD(p, lr=0.1, momentum=0.5), zero_grad_kwargs={"set_to_none": False})
    _, kparams = param_pair()
    opt = optim.Adam(kparams)
    loss_of(kparams, kiln, 0).backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad.abs().sum().item() == 0 for p in kparams)
    opt.zero_grad()
    assert all(p.grad is None for p in kparams)


def test_param_groups_and_live_edits():
    tparams, kparams = param_pair()

    def make(o, p):
        return o.SGD([{"params": [p[0]], "lr": 0.2, "name": "weights"},
                      {"params": [p[1]]}], lr=0.05, momentum=0.9)

    topt, kopt = make(torch.optim, tparams), make(optim, kparams)
    group = kopt.param_groups[0]
    assert group["lr"] == 0.2 and group["momentum"] == 0.9 and group["name"] == "weights"
    assert group["params"][0] is kparams[0] and kopt.param_groups[1]["lr"] == 0.05
    for step in range(4):
        if step == 2:  # edited through the views, as training loops do
            for og in (topt, kopt):
                og.param_groups[1]["lr"] = 0.5
                og.param_groups[0]["momentum"] = 0.1
        for opt, params, lib in ((topt, tparams, torch), (kopt, kparams, kiln)):
            opt.zero_grad()
            loss_of(params, lib, step).backward()
            opt.step()
        for tp, kp in zip(tparams, kparams):
            close(kp, tp)
    assert dict(kopt.param_groups[1])["lr"] == 0.5
    assert kopt.state_dict()["param_groups"][0]["name"] == "weights"
    extra = nn.Parameter(kiln.ones(2))
    kopt.add_param_group({"params": extra, "lr": 1.0})
    assert len(kopt.param_groups) == 3 and kopt.param_groups[2]["momentum"] == 0.9
    extra.grad = kiln.ones(2)
    kopt.step()
    assert extra.tolist() == [0.0, 0.0]
    with pytest.raises(kiln.KilnError, match="Invalid learning rate"):
        kopt.param_groups[0]["lr"] = -1.0
    assert kopt.param_groups[0]["lr"] == 0.2


def test_state_dict_resume_matches_uninterrupted_run():
    def make(o, p):
        return o.Adam(p, lr=0.05, amsgrad=True)

    _, kopt, _, kparams = run_both(make, steps=3)
    saved = kopt.state_dict()
    saved_values = [p.detach().clone() for p in kparams]
    # Continue the original, and a fresh optimizer loaded from the state dict on copies.
    copies = [nn.Parameter(v.clone()) for v in saved_values]
    resumed = make(optim, copies)
    resumed.load_state_dict(saved)
    assert resumed.state_dict()["state"][0]["step"].item() == 3
    for step in range(3, 5):
        for opt, params in ((kopt, kparams), (resumed, copies)):
            opt.zero_grad()
            loss_of(params, kiln, step).backward()
            opt.step()
    for a, b in zip(kparams, copies):
        assert a.tolist() == b.tolist()


def test_closure_and_errors():
    _, kparams = param_pair()
    opt = optim.SGD(kparams, lr=0.1)

    def closure():
        opt.zero_grad()
        loss = loss_of(kparams, kiln, 0)
        loss.backward()
        return loss

    assert opt.step(closure).item() > 0
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(kparams[0])
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.raises(kiln.KilnError, match="Invalid"):
        optim.Adam(kparams, lr=-1)
    assert "Parameter Group 0" in repr(opt) and "lr: 0.1" in repr(opt)
    named = optim.SGD(nn.Linear(2, 2).named_parameters(), lr=0.1)
    assert named.param_groups[0]["param_names"] == ["weight", "bias"]


def test_python_optimizer_subclass():
    class SignSGD(optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, {"lr": lr})

        def step(self, closure=None):
            with kiln.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            p.sub_(p.grad.sign() * group["lr"])
                            self.state[p]["steps"] = self.state[p].get("steps", 0) + 1

    p = nn.Parameter(kiln.tensor([1.0, -1.0]))
    opt = SignSGD([p], lr=0.5)
    (p * kiln.tensor([2.0, -3.0])).sum().backward()
    opt.step()
    assert p.tolist() == [0.5, -0.5] and opt.state[p]["steps"] == 1
    opt.zero_grad()
    assert p.grad is None


def test_training_a_python_module_matches_torch():
    def make_model(m):
        class MLP(m.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = m.Linear(4, 8)
                self.fc2 = m.Linear(8, 3)
                self.temperature = m.Parameter(
                    torch.ones(()) if m is torch.nn else kiln.ones([]))

            def forward(self, x):
                return self.fc2(self.fc1(x).relu()) / self.temperature

        return MLP()

    torch.manual_seed(0)
    x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
    for make_opt in (lambda o, p: o.SGD(p, lr=0.1, momentum=0.9),
                     lambda o, p: o.Adam(p, lr=0.01)):
        tmodel, kmodel = make_model(torch.nn), make_model(nn)
        kmodel.load_state_dict({n: k(v) for n, v in tmodel.state_dict().items()})
        topt, kopt = make_opt(torch.optim, tmodel.parameters()), make_opt(optim,
                                                                          kmodel.parameters())
        for _ in range(5):
            topt.zero_grad()
            tloss = torch.nn.functional.cross_entropy(tmodel(x), y)
            tloss.backward()
            topt.step()
            kopt.zero_grad()
            kloss = nn.functional.cross_entropy(kmodel(k(x)), k(y))
            kloss.backward()
            kopt.step()
            assert kloss.item() == pytest.approx(tloss.item(), abs=1e-5)
        for (name, kp), (_, tp) in zip(kmodel.named_parameters(), tmodel.named_parameters()):
            close(kp, tp, atol=2e-5)


SCHEDULERS = [
    ("StepLR", lambda s, o: s.StepLR(o, step_size=3, gamma=0.5)),
    ("MultiStepLR", lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.3)),
    ("CosineAnnealingLR", lambda s, o: s.CosineAnnealingLR(o, T_max=6, eta_min=0.01)),
    ("LinearLR", lambda s, o: s.LinearLR(o, start_factor=0.25, total_iters=4)),
    ("LambdaLR", lambda s, o: s.LambdaLR(o, lr_lambda=lambda epoch: 0.9 ** epoch)),
    ("LambdaLR_per_group", lambda s, o: s.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: e])),
    ("OneCycleLR", lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=10)),
    ("OneCycleLR_linear", lambda s, o: s.OneCycleLR(o, max_lr=[0.5, 2.0], epochs=2,
                                                    steps_per_epoch=5, anneal_strategy="linear",
                                                    three_phase=True)),
]


@pytest.mark.parametrize("name,make", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_matches_torch(name, make):
    tparams, kparams = param_pair()

    def make_opt(o, p):
        return o.SGD([{"params": [p[0]]}, {"params": [p[1]], "lr": 0.2}], lr=0.1, momentum=0.9)

    topt, kopt = make_opt(torch.optim, tparams), make_opt(optim, kparams)
    tsched, ksched = make(torch.optim.lr_scheduler, topt), make(optim.lr_scheduler, kopt)
    for _ in range(9):
        assert ksched.get_last_lr() == pytest.approx(tsched.get_last_lr())
        for tg, kg in zip(topt.param_groups, kopt.param_groups):
            assert kg["lr"] == pytest.approx(tg["lr"])
            assert kg["momentum"] == pytest.approx(tg["momentum"])
        topt.step()
        kopt.step()
        tsched.step()
        ksched.step()
    assert ksched.last_epoch == tsched.last_epoch
    state = ksched.state_dict()
    assert state["last_epoch"] == 9 and state["_last_lr"] == ksched.get_last_lr()


def test_scheduler_needs_a_kiln_optimizer():
    class Custom(optim.Optimizer):
        pass

    with pytest.raises(TypeError, match="kiln.optim's optimizers"):
        optim.lr_scheduler.StepLR(Custom([nn.Parameter(kiln.ones(1))], {"lr": 0.1}), 2)


def test_adam_with_decoupled_weight_decay_is_adamw():
    w1 = kiln.ones(3, requires_grad=True)
    w2 = kiln.ones(3, requires_grad=True)
    a = kiln.optim.Adam([w1], lr=0.1, weight_decay=0.5, decoupled_weight_decay=True)
    b = kiln.optim.AdamW([w2], lr=0.1, weight_decay=0.5)
    for opt, w in [(a, w1), (b, w2)]:
        for _ in range(3):
            opt.zero_grad()
            (w * kiln.tensor([1.0, -2.0, 3.0])).sum().backward()
            opt.step()
    np.testing.assert_array_equal(w1.detach().numpy(), w2.detach().numpy())
