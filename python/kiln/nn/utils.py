"""kiln.nn.utils: gradient clipping (kiln::optim::clip_grad_norm_ / clip_grad_value_) and the
flattening helpers of torch.nn.utils."""
from .. import _C
from .._C import Tensor


def _tensors(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients in place so that their joint norm is at most max_norm; returns the
    total norm before clipping (a 0-dim tensor). norm_type may be float('inf') or 'inf'."""
    return _C.nn._clip_grad_norm_(_tensors(parameters), float(max_norm), float(norm_type),
                                  error_if_nonfinite)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient in place to [-clip_value, clip_value]."""
    _C.nn._clip_grad_value_(_tensors(parameters), float(clip_value))


def parameters_to_vector(parameters):
    return _C._ops.cat([p.reshape(-1) for p in _tensors(parameters)])


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of vec into the parameters (in place)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected vec to be a kiln.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in _tensors(parameters):
        n = p.numel()
        p.data = vec[offset:offset + n].reshape(p.shape)
        offset += n
