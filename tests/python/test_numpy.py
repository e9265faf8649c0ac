"""numpy interop: memory sharing both ways, numpy's dispatch protocols on kiln tensors, and
numpy functions compiled by kiln (one fused graph, numpy arrays out, numpy's results)."""
import numpy as np
import pytest

import kiln


def test_from_numpy_and_numpy_share_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = kiln.from_numpy(a)
    assert t.dtype is kiln.float32 and t.shape == (2, 3)
    a[0, 0] = 100.0
    assert t[0, 0].item() == 100.0
    t.add_(1)
    assert a[1, 2] == 6.0
    back = t.numpy()
    back[1, 1] = -5.0
    assert a[1, 1] == -5.0
    assert np.asarray(t).base is not None and np.shares_memory(np.asarray(t), a)
    # strided views keep their strides
    col = kiln.from_numpy(a[:, 1])
    assert col.tolist() == [2.0, -5.0] and col.stride() == (3,)
    for dtype, kdtype in [(np.int64, kiln.int64), (np.int32, kiln.int32), (np.bool_, kiln.bool),
                          (np.float64, kiln.float64), (np.uint8, kiln.uint8),
                          (np.float16, kiln.float16)]:
        assert kiln.from_numpy(np.zeros(3, dtype=dtype)).dtype is kdtype
        assert kiln.zeros(3, dtype=kdtype).numpy().dtype == np.dtype(dtype)
    with pytest.raises(ValueError, match="negative"):
        kiln.from_numpy(a[:, ::-1])
    with pytest.raises(TypeError, match="complex128|dtype"):
        kiln.from_numpy(np.zeros(2, dtype=np.complex128))
    with pytest.raises(RuntimeError, match="requires grad"):
        kiln.ones(2, requires_grad=True).numpy()
    # the array outlives the Python name it came from
    t2 = kiln.from_numpy(np.full(4, 3.0, dtype=np.float32))
    import gc
    gc.collect()
    assert t2.tolist() == [3.0] * 4


def test_numpy_functions_on_kiln_tensors_run_as_kiln_ops():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    ta, tb = kiln.from_numpy(a), kiln.from_numpy(b)
    cases = [
        (lambda x, y: np.sin(x) * np.cos(y), None),
        (lambda x, y: np.exp(-x * x) + np.maximum(x, y), None),
        (lambda x, y: np.sum(x, axis=1), None),
        (lambda x, y: np.mean(x, axis=0, keepdims=True), None),
        (lambda x, y: np.std(x, axis=1, ddof=1), None),
        (lambda x, y: np.max(x), None),
        (lambda x, y: np.argmax(x, axis=1), None),
        (lambda x, y: np.concatenate([x, y], axis=0), None),
        (lambda x, y: np.stack([x, y], axis=1), None),
        (lambda x, y: np.where(x > 0, x, y), None),
        (lambda x, y: np.clip(x, -0.5, 0.5), None),
        (lambda x, y: np.dot(x, y.T), None),
        (lambda x, y: np.matmul(x, np.transpose(y)), None),
        (lambda x, y: np.reshape(x, (5, 4)), None),
        (lambda x, y: np.add.reduce(x, axis=1), None),
        (lambda x, y: np.cumsum(x, axis=1), None),
        (lambda x, y: np.linalg.norm(x, axis=1), None),
        (lambda x, y: np.einsum("ij,ij->i", x, y), None),
    ]
    for fn, _ in cases:
        got = fn(ta, tb)
        assert isinstance(got, kiln.Tensor), fn
        np.testing.assert_allclose(np.asarray(got), fn(a, b), rtol=1e-5, atol=1e-5)
    out = kiln.empty(4, 5)
    r = np.add(ta, tb, out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), a + b, rtol=1e-6)


def numpy_workload(a, b):
    return np.sum(np.sin(a) * np.cos(b) + np.exp(-a * a), axis=1)


def test_compiled_numpy_function_is_one_graph_with_numpy_results():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 33)).astype(np.float32)
    b = rng.standard_normal((64, 33)).astype(np.float32)
    f = kiln.compile(numpy_workload)
    got = f(a, b)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.shape == (64,)
    np.testing.assert_allclose(got, numpy_workload(a, b), rtol=1e-5, atol=1e-5)
    got2 = f(b, a)  # cache hit
    np.testing.assert_allclose(got2, numpy_workload(b, a), rtol=1e-5, atol=1e-5)
    report = kiln.explain(numpy_workload, a, b)
    assert "graphs: 1\n" in report and "graph breaks: 0\n" in report, report


def test_compiled_numpy_methods_and_operators():
    def normalize(x):
        centered = x - x.mean(axis=0)
        scale = np.sqrt((centered ** 2).sum(axis=0) / (x.shape[0] - 1))
        return (centered / scale).T.reshape(-1), x.max()

    x = np.random.default_rng(2).standard_normal((16, 3)).astype(np.float32)
    got, top = kiln.compile(normalize)(x)
    want, want_top = normalize(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert float(top) == pytest.approx(float(want_top))


def test_unsupported_numpy_function_breaks_the_graph_not_the_answer():
    def uses_fft(x):
        y = np.cos(x) * 2
        spectrum = np.abs(np.fft.rfft(y))  # not a kiln op: numpy runs it on real values
        return spectrum.astype(np.float32) + 1

    x = np.linspace(0, 3, 32, dtype=np.float32)
    got = kiln.compile(uses_fft)(x)
    np.testing.assert_allclose(got, uses_fft(x), rtol=1e-5, atol=1e-5)
    report = kiln.explain(uses_fft, x)
    assert "graph breaks: 1" in report and "test_numpy.py:" in report, report


def test_reshape_orders_and_normalize_out():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = kiln.from_numpy(a)
    for order in ["C", "F", "A"]:
        np.testing.assert_array_equal(np.asarray(np.reshape(t, (2, 6), order=order)),
                                      np.reshape(a, (2, 6), order=order))
    f = np.asfortranarray(a)
    np.testing.assert_array_equal(np.asarray(np.reshape(kiln.from_numpy(f), (6, 2), order="A")),
                                  np.reshape(f, (6, 2), order="A"))
    out = kiln.empty(3, 4)
    r = kiln.nn.functional.normalize(t, dim=1, out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), a / np.linalg.norm(a, axis=1, keepdims=True),
                               rtol=1e-6)

