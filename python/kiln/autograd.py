"""kiln.autograd: grad() and backward() as in torch.autograd."""
from . import _C
from ._grad_mode import enable_grad, no_grad, set_grad_enabled  # noqa: F401


def _as_list(x):
    if x is None:
        return None
    if isinstance(x, _C.Tensor):
        return [x]
    return list(x)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """d sum(outputs[i] * grad_outputs[i]) / d inputs[j], as a tuple (None where unused)."""
    outputs = _as_list(outputs)
    inputs = _as_list(inputs)
    grads = _as_list(grad_outputs) or [None] * len(outputs)
    return _C._autograd_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(tensors)
    for i, (t, g) in enumerate(zip(tensors, grads)):
        last = i == len(tensors) - 1
        t.backward(g, retain_graph=retain_graph if last else True, create_graph=create_graph,
                   inputs=_as_list(inputs))
