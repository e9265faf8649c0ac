"""kiln's optimizers, with torch.optim's signatures and defaults; the updates run in C++
(kiln::optim). Options PyTorch has for its GPU or functional variants (foreach, fused,
differentiable, capturable) are accepted and have no effect."""
from .. import _C
from .optimizer import _NativeOptimizer


class SGD(_NativeOptimizer):
    _native = _C.optim.SGD

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))


class Adam(_NativeOptimizer):
    _native = _C.optim.Adam

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if decoupled_weight_decay:  # PyTorch's definition: then Adam is AdamW
            self._native = _C.optim.AdamW
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))


class AdamW(_NativeOptimizer):
    _native = _C.optim.AdamW

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))


class RMSprop(_NativeOptimizer):
    _native = _C.optim.RMSprop

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize))
