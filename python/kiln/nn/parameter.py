"""kiln.nn.Parameter: a kiln.Tensor that a Module registers as a parameter, as torch.nn.Parameter."""
import weakref

from .. import _C
from .._C import Tensor

# The live Parameter object of each parameter tensor (by TensorImpl), so that every route to a
# parameter (module attribute, parameters(), an optimizer's param_groups) gives the same Python
# object while one is referenced, as in PyTorch: `layer.weight is layer.weight`.
_live = weakref.WeakValueDictionary()


class Parameter(Tensor):
    """Parameter(data=None, requires_grad=True): `data` detached (sharing its storage), a leaf
    that requires grad (unless requires_grad=False)."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = _C._ops.empty([0])
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter: expected a kiln.Tensor, got {type(data).__name__}")
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)
        super().__init__(t)
        _live[_C.nn._tensor_key(self)] = self

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        result = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return Parameter, (self.detach(), self.requires_grad)


def _as_parameter(t):
    """The Parameter object of a registered parameter tensor (made on first use); None for None."""
    if t is None:
        return None
    key = _C.nn._tensor_key(t)
    p = _live.get(key)
    if p is None:
        p = Parameter.__new__(Parameter)
        Tensor.__init__(p, t)  # another handle on the same tensor: no detach, no copy
        _live[key] = p
    return p
