"""kiln.optim: SGD, Adam, AdamW, RMSprop and the LR schedulers (torch.optim), over kiln::optim."""
from .optimizer import Optimizer  # noqa: F401
from .optimizers import SGD, Adam, AdamW, RMSprop  # noqa: F401
from . import lr_scheduler  # noqa: F401
