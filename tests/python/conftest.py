"""Shared helpers of the Python tests: PyTorch is the oracle where it is installed."""
import numpy as np
import pytest


def to_numpy(t):
    """A kiln or torch tensor's values as a float64/int numpy array."""
    if hasattr(t, "detach"):
        t = t.detach()
    if type(t).__module__.startswith("torch"):
        return t.numpy()
    return np.array(t.tolist())


def assert_close(kiln_value, torch_value, rtol=1e-5, atol=1e-5):
    a = to_numpy(kiln_value)
    b = to_numpy(torch_value)
    assert a.shape == b.shape, f"shape {a.shape} != {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")
