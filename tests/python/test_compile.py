"""kiln.compile from Python: functions and modules compiled vs eager (forward and backward),
guards and recompiles, graph breaks naming the Python line, explain, and Python backends."""
import inspect

import pytest

import kiln
from conftest import assert_close

BACKENDS = ["inductor", "aot_eager", "eager"]


def mlp_fn(x, w1, b1, w2):
    h = kiln.nn.functional.gelu(x @ w1 + b1)
    return (kiln.softmax(h @ w2, dim=-1) * 2).sum(dim=0)


def inputs(requires_grad=False):
    kiln.manual_seed(3)
    return [kiln.randn(6, 5, requires_grad=requires_grad),
            kiln.randn(5, 7, requires_grad=requires_grad),
            kiln.randn(7, requires_grad=requires_grad),
            kiln.randn(7, 4, requires_grad=requires_grad)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_function_matches_eager_forward_and_backward(backend):
    eager_in = inputs(requires_grad=True)
    compiled_in = inputs(requires_grad=True)
    f = kiln.compile(mlp_fn, backend=backend)
    want = mlp_fn(*eager_in)
    got = f(*compiled_in)
    assert_close(got, want, rtol=1e-5, atol=1e-6)
    want.sum().backward()
    got.sum().backward()
    for a, b in zip(compiled_in, eager_in):
        assert_close(a.grad, b.grad, rtol=1e-5, atol=1e-6)
    assert f.cache_entries == 1
    f(*compiled_in)
    assert f.cache_entries == 1


def test_decorator_kwargs_and_nested_structures():
    @kiln.compile(fullgraph=True)
    def step(batch, scale=1.0, *, use_bias=True):
        out = {"y": batch["x"] * scale}
        if use_bias:
            out["y"] = out["y"] + batch["bias"]
        return out, [batch["x"].sum(), 3]

    x, bias = kiln.randn(3, 2), kiln.randn(2)
    out, extra = step({"x": x, "bias": bias}, scale=2.0)
    assert_close(out["y"], x * 2.0 + bias)
    assert extra[1] == 3 and isinstance(extra, list)
    out2, _ = step({"x": x, "bias": bias}, scale=2.0, use_bias=False)  # a guard fails
    assert_close(out2["y"], x * 2.0)
    assert step.cache_entries == 2


def test_shape_change_recompiles_then_goes_dynamic():
    f = kiln.compile(lambda x: (x * x).sum(-1))
    for n in [4, 5, 6, 7]:
        x = kiln.randn(3, n)
        assert_close(f(x), (x * x).sum(-1))
    assert f.cache_entries == 2  # static, then one dynamic entry (automatic dynamic)
    g = kiln.compile(lambda x: x.relu() + 1, dynamic=True)
    for n in [2, 9, 17]:
        x = kiln.randn(n, 3)
        assert_close(g(x), x.relu() + 1)
    assert g.cache_entries == 1


def test_graph_break_keeps_results_and_names_the_python_line():
    def f(x):
        m = x.max()
        scale = m.item()  # the graph breaks here
        return x * scale

    x = kiln.tensor([1.0, -2.0, 3.0])
    compiled = kiln.compile(f)
    assert_close(compiled(x), f(x))
    assert_close(compiled(x * 2), f(x * 2))
    line = inspect.getsourcelines(f)[1] + 2
    report = kiln.explain(f, x)
    assert "graph breaks: 1" in report and f"test_compile.py:{line}" in report, report
    with pytest.raises(kiln.KilnError, match=f"Tensor.item.*test_compile.py:{line}"):
        kiln.compile(f, fullgraph=True)(x)


def test_explicit_graph_break():
    def f(x):
        y = x.sin()
        kiln.graph_break()
        return y.cos()

    x = kiln.randn(4)
    assert_close(kiln.compile(f)(x), x.sin().cos())
    assert "graphs: 2" in kiln.explain(f, x)


class TwoLayer(kiln.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = kiln.nn.Linear(5, 8)
        self.fc2 = kiln.nn.Linear(8, 3)
        self.scale = kiln.nn.Parameter(kiln.ones(3))

    def forward(self, x):
        return self.fc2(kiln.relu(self.fc1(x))) * self.scale


def make_model(seed):
    kiln.manual_seed(seed)
    return TwoLayer()


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
def test_compiled_python_module_trains_as_eager(backend):
    eager_model, compiled_model = make_model(0), make_model(0)
    compiled = kiln.compile(compiled_model, backend=backend)
    assert compiled._orig_mod is compiled_model
    opt_e = kiln.optim.SGD(eager_model.parameters(), lr=0.1)
    opt_c = kiln.optim.SGD(compiled.parameters(), lr=0.1)
    kiln.manual_seed(1)
    x, target = kiln.randn(4, 5), kiln.randn(4, 3)
    for _ in range(3):
        for model, opt in [(eager_model, opt_e), (compiled, opt_c)]:
            loss = ((model(x) - target) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    for (name, p), (_, q) in zip(eager_model.named_parameters(),
                                 compiled_model.named_parameters()):
        assert_close(q, p, rtol=1e-5, atol=1e-6)
    compiled_model.eval()  # the training flag is guarded: a recompile, same results
    assert_close(compiled(x), eager_model.eval()(x), rtol=1e-5, atol=1e-6)


def test_python_backend_receives_the_graph():
    seen = []

    def counting_backend(gm, example_inputs):
        seen.append((gm.num_ops, [tuple(t.shape) for t in example_inputs], gm.code))
        return gm  # run with the eager interpreter

    f = kiln.compile(lambda x, y: (x + y).relu() * 2, backend=counting_backend)
    x, y = kiln.randn(2, 3), kiln.randn(2, 3)
    assert_close(f(x, y), (x + y).relu() * 2)
    assert len(seen) == 1 and seen[0][0] == 3 and seen[0][1][:2] == [(2, 3), (2, 3)]
    assert "relu" in seen[0][2]

    @kiln.register_backend
    def my_python_backend(gm, example_inputs):
        return lambda *args: [t * 1 for t in gm(*args)]

    assert "my_python_backend" in kiln.list_backends()
    g = kiln.compile(lambda x: x.exp(), backend="my_python_backend")
    assert_close(g(x), x.exp())


def test_disable_and_errors():
    f = kiln.compile(lambda x: x + 1, disable=True)
    assert_close(f(kiln.ones(2)), kiln.full((2,), 2.0))
    with pytest.raises(TypeError, match="expected a function or a module"):
        kiln.compile(3)
    with pytest.raises(kiln.KilnError, match="unknown|no backend|registered"):
        kiln.compile(lambda x: x + 1, backend="no_such_backend")(kiln.ones(1))


def test_an_exception_while_tracing_propagates_and_the_function_stays_usable():
    def f(x, fail):
        y = x.exp()
        if fail:
            raise ValueError("bad input for f")
        return y * 2

    c = kiln.compile(f)
    x = kiln.randn(3)
    with pytest.raises(ValueError, match="bad input for f"):
        c(x, True)
    assert_close(c(x, False), x.exp() * 2)
    with pytest.raises(ValueError, match="bad input for f"):
        c(x, True)


def test_captured_tensors_and_python_objects_are_guarded():
    weight = kiln.randn(3)
    config = {"act": "relu"}  # an arbitrary object argument: guarded by identity

    def f(x, cfg):
        return getattr(x * weight, cfg["act"])()

    c = kiln.compile(f)
    x = kiln.randn(3)
    assert_close(c(x, config), (x * weight).relu())
    weight.mul_(-1)  # captured tensors are graph inputs, not baked-in constants
    assert_close(c(x, config), (x * weight).relu())


def test_optimized_module_is_a_module_over_the_original():
    kiln.manual_seed(0)
    layer = kiln.nn.Linear(4, 2)
    compiled = kiln.compile(layer)
    assert isinstance(compiled, kiln.nn.Module)
    assert list(compiled.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert compiled.weight is layer.weight and compiled.in_features == 4
    x = kiln.randn(3, 4, requires_grad=True)
    y = compiled(x)
    assert_close(y, layer(x))
    y.sum().backward()
    assert_close(layer.weight.grad, x.detach().sum(0).unsqueeze(0).expand(2, 4))


def test_sizes_of_dynamic_dimensions_are_symbolic_in_python_code():
    seen = []

    def f(x):
        n, m = x.shape
        seen.append(type(n).__name__)
        return x.reshape(n * m).sum() + x.expand(2, n, x.size(1)).mean()

    c = kiln.compile(f, dynamic=True)
    for k in [3, 5, 8]:
        x = kiln.randn(k, 4)
        assert_close(c(x), f(x))
    assert c.cache_entries == 1
    assert seen.count("SymInt") == 1  # traced once; the eager references saw plain ints

    def g(x):
        # A size used as a number with tensors is specialized under a guard (kiln has no
        # symbolic scalars): one entry per size.
        return x / x.shape[0]

    cg = kiln.compile(g, dynamic=True)
    for k in [3, 5]:
        x = kiln.randn(k, 2)
        assert_close(cg(x), g(x))
    assert cg.cache_entries == 2
