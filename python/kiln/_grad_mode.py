"""no_grad, enable_grad, set_grad_enabled and inference_mode: context managers and decorators,
as in PyTorch."""
import functools

from . import _C


class _GradModeContext:
    """Base: a context manager that is also a decorator (a fresh context per call)."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)

        return wrapper

    def _args(self):
        return ()


class no_grad(_GradModeContext):
    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


class enable_grad(_GradModeContext):
    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


class set_grad_enabled(_GradModeContext):
    """Sets grad mode at once (as a function) and restores it when used as a context manager."""

    def __init__(self, mode):
        self._mode = mode
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(mode)

    def _args(self):
        return (self._mode,)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


class inference_mode(_GradModeContext):
    def __init__(self, mode=True):
        self._mode = mode

    def _args(self):
        return (self._mode,)

    def __enter__(self):
        self._scope = _C._InferenceModeScope(self._mode)
        self._scope.enter()

    def __exit__(self, *exc):
        self._scope.exit()
        return False
