"""Learning-rate schedulers, as torch.optim.lr_scheduler (kiln::optim's): construction sets the
epoch-0 rates in the optimizer's param groups, each step() advances one epoch (one batch for
OneCycleLR)."""
from .. import _C


def _native(optimizer):
    impl = getattr(optimizer, "_impl", None)
    if impl is None:
        raise TypeError(f"{type(optimizer).__name__} is not one of kiln.optim's optimizers "
                        "(SGD, Adam, AdamW, RMSprop), which kiln's schedulers act on")
    return impl


def _check_last_epoch(last_epoch):
    if last_epoch != -1:
        raise NotImplementedError("last_epoch other than -1 is not supported: build the "
                                  "scheduler fresh and load_state_dict to resume")


class LRScheduler:
    def __init__(self, optimizer, impl):
        self.optimizer = optimizer
        self._impl = impl

    def step(self, epoch=None):
        if epoch is not None:
            raise NotImplementedError("step(epoch) is deprecated in PyTorch and not supported")
        self._impl.step()

    def get_last_lr(self):
        return list(self._impl.get_last_lr())

    @property
    def last_epoch(self):
        return self._impl.last_epoch

    @property
    def base_lrs(self):
        return list(self._impl.base_lrs)

    def state_dict(self):
        return self._impl.state_dict()

    def load_state_dict(self, state_dict):
        self._impl.load_state_dict(state_dict)


class StepLR(LRScheduler):
    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        _check_last_epoch(last_epoch)
        super().__init__(optimizer, _C.optim.StepLR(_native(optimizer), step_size, gamma))


class MultiStepLR(LRScheduler):
    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        _check_last_epoch(last_epoch)
        super().__init__(optimizer,
                         _C.optim.MultiStepLR(_native(optimizer), list(milestones), gamma))


class CosineAnnealingLR(LRScheduler):
    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        _check_last_epoch(last_epoch)
        super().__init__(optimizer,
                         _C.optim.CosineAnnealingLR(_native(optimizer), T_max, eta_min))


class LinearLR(LRScheduler):
    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        _check_last_epoch(last_epoch)
        super().__init__(optimizer, _C.optim.LinearLR(_native(optimizer), start_factor,
                                                      end_factor, total_iters))


class LambdaLR(LRScheduler):
    """base_lr * lr_lambda(epoch): one function, or a list with one per param group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        _check_last_epoch(last_epoch)
        impl = _native(optimizer)
        lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) \
            else [lr_lambda] * impl.num_param_groups()
        super().__init__(optimizer, _C.optim.LambdaLR(impl, lambdas))


class OneCycleLR(LRScheduler):
    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        _check_last_epoch(last_epoch)
        impl = _native(optimizer)
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND "
                                 "steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        max_lrs = list(max_lr) if isinstance(max_lr, (list, tuple)) \
            else [max_lr] * impl.num_param_groups()
        if isinstance(base_momentum, (list, tuple)) or isinstance(max_momentum, (list, tuple)):
            raise NotImplementedError("OneCycleLR: per-group momenta are not supported")
        super().__init__(optimizer, _C.optim.OneCycleLR(
            impl, max_lrs, total_steps, pct_start, anneal_strategy, cycle_momentum,
            base_momentum, max_momentum, div_factor, final_div_factor, three_phase))
