"""kiln.Tensor's Python API against PyTorch: creation, dtypes, operators with broadcasting and
type promotion, methods bound from the op registry, indexing, autograd and errors."""
import numpy as np
import pytest

import kiln
from conftest import assert_close


def pair(torch, data, dtype="float32", requires_grad=False):
    k = kiln.tensor(data, dtype=getattr(kiln, dtype), requires_grad=requires_grad)
    t = torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    return k, t


def test_creation_and_metadata():
    x = kiln.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.shape == (2, 3) and x.dtype is kiln.float32 and x.ndim == 2
    assert x.size() == kiln.Size([2, 3]) and x.size(1) == 3 and x.numel() == 6
    assert str(x.device) == "cpu" and x.device == kiln.device("cpu")
    assert kiln.tensor([1, 2]).dtype is kiln.int64
    assert kiln.tensor([True, False]).dtype is kiln.bool
    assert kiln.tensor(3.5).shape == () and kiln.tensor(3.5).item() == 3.5
    assert kiln.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert kiln.ones((4,), dtype=kiln.int32).tolist() == [1, 1, 1, 1]
    assert kiln.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert kiln.arange(1, 2, 0.25).tolist() == [1.0, 1.25, 1.5, 1.75]
    assert kiln.full((2,), 7).tolist() == [7, 7]
    assert kiln.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(kiln.KilnError, match="expected sequence of length 2 at dim 1, got 3"):
        kiln.tensor([[1, 2], [3, 4, 5]])


def test_random_is_seeded():
    kiln.manual_seed(7)
    a = kiln.randn(3, 4)
    kiln.manual_seed(7)
    assert a.tolist() == kiln.randn(3, 4).tolist()
    r = kiln.rand(1000)
    assert 0.0 <= r.min().item() and r.max().item() < 1.0


def test_operators_broadcast_and_promote(torch):
    a_data = [[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]]
    b_data = [2.0, -3.0, 0.5]
    ka, ta = pair(torch, a_data)
    kb, tb = pair(torch, b_data)
    for fn in [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
               lambda a, b: a ** 2, lambda a, b: 2 ** b, lambda a, b: 1 - a, lambda a, b: 3 / b,
               lambda a, b: a @ b, lambda a, b: -a, lambda a, b: abs(a), lambda a, b: a // b,
               lambda a, b: a % b, lambda a, b: (a > b) & (a < 2), lambda a, b: a == 0.5]:
        assert_close(fn(ka, kb), fn(ta, tb))
    ki, ti = pair(torch, [1, 2, 3], "int64")
    for fn in [lambda x: x * 2, lambda x: x * 2.5, lambda x: x / 2, lambda x: x + True]:
        kr, tr = fn(ki), fn(ti)
        assert str(kr.dtype).split(".")[1] == str(tr.dtype).split(".")[1]
        assert_close(kr, tr)


def test_registry_methods_and_functions(torch):
    k, t = pair(torch, np.linspace(-2, 2, 24).reshape(2, 3, 4).tolist())
    assert_close(k.sum(), t.sum())
    assert_close(k.sum(1), t.sum(1))
    assert_close(k.sum(dim=(0, 2), keepdim=True), t.sum(dim=(0, 2), keepdim=True))
    assert_close(k.mean(-1), t.mean(-1))
    assert_close(k.std(1), t.std(1))
    assert_close(k.var(1, unbiased=False), t.var(1, unbiased=False))
    assert_close(kiln.softmax(k, -1), torch.softmax(t, -1))
    assert_close(k.view(6, 4), t.view(6, 4))
    assert_close(k.reshape(-1), t.reshape(-1))
    assert_close(k.permute(2, 0, 1), t.permute(2, 0, 1))
    assert_close(k.transpose(0, 2), t.transpose(0, 2))
    assert_close(k.unsqueeze(1), t.unsqueeze(1))
    assert_close(k.flatten(1), t.flatten(1))
    assert_close(k.exp().log1p(), t.exp().log1p())
    assert_close(k.clamp(min=-0.5, max=0.5), t.clamp(min=-0.5, max=0.5))
    assert_close(kiln.cat([k, k], 1), torch.cat([t, t], 1))
    assert_close(kiln.stack([k, k]), torch.stack([t, t]))
    assert_close(kiln.where(k > 0, k, kiln.zeros_like(k)), torch.where(t > 0, t, 0.0))
    values, indices = k.max(dim=2)
    tv = t.max(dim=2)
    assert_close(values, tv.values) and assert_close(indices, tv.indices)
    named = k.max(2)
    assert_close(named.indices, tv.indices)
    assert_close(kiln.max(k, -k), torch.max(t, -t))
    assert_close(k.argmax(), t.argmax())
    assert_close(k.matmul(k.transpose(1, 2)), t.matmul(t.transpose(1, 2)))
    parts = k.split(2, dim=2)
    assert len(parts) == 2 and parts[1].shape == (2, 3, 2)
    assert [c.shape for c in k.chunk(3, 1)] == [(2, 1, 4)] * 3


def test_in_place_returns_the_same_object():
    x = kiln.ones(3)
    y = x.add_(1)
    assert y is x and x.tolist() == [2.0, 2.0, 2.0]
    x += 1
    x *= kiln.tensor([1.0, 2.0, 3.0])
    assert x.tolist() == [3.0, 6.0, 9.0]
    out = kiln.empty(3)
    r = kiln.add(x, x, out=out)
    assert r is out and out.tolist() == [6.0, 12.0, 18.0]


def test_indexing_get_and_set(torch):
    data = np.arange(60, dtype=np.float32).reshape(3, 4, 5).tolist()
    k, t = pair(torch, data)
    for index in [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0), slice(1, 3),
                  (slice(None, None, 2), slice(1, None), 3), (0, [0, 2, 3]), ([0, 2], [1, 3]),
                  (Ellipsis, None), (slice(None), [1, 1], slice(0, 2))]:
        assert_close(k[index], t[index])
    assert_close(k[k > 30], t[t > 30])
    ki = kiln.tensor([2, 0])
    assert_close(k[ki], t[torch.tensor([2, 0])])
    k2, t2 = pair(torch, data)
    for index, value in [((0, 1), 5.0), ((slice(None), 2, slice(0, 2)), -1.0),
                         ((1, [0, 3]), 9.0)]:
        k2[index] = value
        t2[index] = value
    k2[k2 > 50] = 0.0
    t2[t2 > 50] = 0.0
    k2[2, 1] = kiln.arange(5.0)
    t2[2, 1] = torch.arange(5.0)
    assert_close(k2, t2)
    with pytest.raises(IndexError):
        k[3]
    with pytest.raises(IndexError):
        k[0, 0, 0, 0]


def test_autograd_matches_torch(torch):
    kx, tx = pair(torch, [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
    kw, tw = pair(torch, [[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]], requires_grad=True)

    def f(lib, x, w):
        h = lib.tanh(x @ w)
        return (h * h).sum() + x.exp().mean()

    f(kiln, kx, kw).backward()
    f(torch, tx, tw).backward()
    assert_close(kx.grad, tx.grad)
    assert_close(kw.grad, tw.grad)
    assert kx.is_leaf and kx.grad_fn is None
    y = kx * 2
    assert not y.is_leaf and y.grad_fn is not None
    gx, = kiln.autograd.grad((kx ** 3).sum(), kx)
    assert_close(gx, 3 * tx.detach() ** 2)
    with kiln.no_grad():
        assert not (kx * 2).requires_grad
    assert kiln.is_grad_enabled()

    @kiln.no_grad()
    def no_history(x):
        return x * 3

    assert not no_history(kx).requires_grad
    with kiln.inference_mode():
        assert not (kx * 2).requires_grad
    seen = []
    z = kiln.ones(2, requires_grad=True)
    z.register_hook(lambda g: seen.append(g.tolist()))
    (z * 5).sum().backward()
    assert seen == [[5.0, 5.0]]


def test_conversions():
    x = kiln.tensor([1.7, -2.2])
    assert x.long().tolist() == [1, -2] and x.to(kiln.int32).dtype is kiln.int32
    assert x.double().dtype is kiln.float64 and x.to("cpu") is not None
    assert x.to(kiln.float32)._is_same(x)
    assert x.float().type() == "kiln.FloatTensor"
    assert float(kiln.tensor(2.5)) == 2.5 and int(kiln.tensor(3)) == 3
    assert bool(kiln.tensor([1])) and len(kiln.zeros(4, 2)) == 4
    assert [r.tolist() for r in kiln.tensor([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]
    assert "tensor([ 1.7000, -2.2000])" in repr(x)


def test_errors_are_clear():
    with pytest.raises(TypeError, match=r"add\(\) received an invalid combination of arguments"):
        kiln.add(kiln.ones(2), "a")
    with pytest.raises(kiln.KilnError, match="2.*3"):
        kiln.ones(2) + kiln.ones(3)
    with pytest.raises(RuntimeError):
        kiln.ones(2, 3) @ kiln.ones(2, 3)
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(kiln.ones(2))
