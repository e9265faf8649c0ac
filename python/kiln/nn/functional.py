"""kiln.nn.functional: torch.nn.functional's functions with its signatures and defaults, over
kiln's registered ops (kiln._C._ops), so that they trace into compiled graphs like any op."""
import numbers

from .. import _C

_ops = _C._ops

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "avg_pool1d",
    "avg_pool2d", "batch_norm", "bilinear", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "celu", "conv1d", "conv2d", "conv_transpose1d",
    "conv_transpose2d", "cosine_similarity", "cross_entropy", "dropout", "dropout2d", "elu",
    "embedding", "gelu", "glu", "group_norm", "hardsigmoid", "hardswish", "hardtanh",
    "huber_loss", "interpolate", "kl_div", "l1_loss", "layer_norm", "leaky_relu", "linear",
    "log_softmax", "logsigmoid", "max_pool1d", "max_pool2d", "max_pool2d_with_indices", "mish",
    "mse_loss", "nll_loss", "normalize", "one_hot", "pad", "pairwise_distance", "pixel_shuffle",
    "pixel_unshuffle", "relu", "relu6", "relu_", "rms_norm", "scaled_dot_product_attention",
    "selu", "sigmoid", "silu", "smooth_l1_loss", "softmax", "softmin", "softplus", "softsign",
    "tanh", "tanhshrink", "threshold",
]


# ---- reductions (torch.nn._reduction) ----

def _legacy_reduction(size_average, reduce):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "mean" if size_average and reduce else "sum" if reduce else "none"


def _reduction_code(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    codes = {"none": 0, "mean": 1, "sum": 2}
    if reduction not in codes:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return codes[reduction]


def _inplace(op_name, input, *args):
    getattr(_ops, op_name + "_")(input, *args)
    return input


# ---- activations ----

def relu(input, inplace=False):
    return _inplace("relu", input) if inplace else _ops.relu(input)


def relu_(input):
    return _inplace("relu", input)


def relu6(input, inplace=False):
    return _inplace("relu6", input) if inplace else _ops.relu6(input)


def elu(input, alpha=1.0, inplace=False):
    return _inplace("elu", input, alpha) if inplace else _ops.elu(input, alpha)


def celu(input, alpha=1.0, inplace=False):
    # max(0, x) + min(0, alpha (exp(x / alpha) - 1)): elu with input_scale 1 / alpha.
    if alpha == 0:
        raise ValueError("ZeroDivisionError: alpha cannot be 0 for CELU")
    args = (alpha, 1.0, 1.0 / alpha)
    return _inplace("elu", input, *args) if inplace else _ops.elu(input, *args)


def selu(input, inplace=False):
    return _inplace("selu", input) if inplace else _ops.selu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        return _inplace("leaky_relu", input, negative_slope)
    return _ops.leaky_relu(input, negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if inplace:
        return _inplace("hardtanh", input, min_val, max_val)
    return _ops.hardtanh(input, min_val, max_val)


def gelu(input, approximate="none"):
    return _ops.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    return _inplace("silu", input) if inplace else _ops.silu(input)


def mish(input, inplace=False):
    return _inplace("mish", input) if inplace else _ops.mish(input)


def hardswish(input, inplace=False):
    return _inplace("hardswish", input) if inplace else _ops.hardswish(input)


def hardsigmoid(input, inplace=False):
    return _inplace("hardsigmoid", input) if inplace else _ops.hardsigmoid(input)


def softplus(input, beta=1.0, threshold=20.0):
    return _ops.softplus(input, beta, threshold)


def sigmoid(input):
    return _ops.sigmoid(input)


def tanh(input):
    return _ops.tanh(input)


def logsigmoid(input):
    return -_ops.softplus(-input)


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - _ops.tanh(input)


def threshold(input, threshold, value, inplace=False):  # noqa: A002
    out = _ops.where(input > threshold, input, value)
    return input.copy_(out) if inplace else out


def glu(input, dim=-1):
    a, b = _ops.chunk(input, 2, dim)
    return a * _ops.sigmoid(b)


def _softmax_dim(ndim):
    # PyTorch's legacy choice for dim=None.
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _ops.softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _ops.softmax(-input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _ops.log_softmax(input, dim, dtype)


# ---- dropout ----

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if inplace:
        return _inplace("dropout", input, p, training)
    return _ops.dropout(input, p, training)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, H, W) input, or of (C, H, W) input as one sample."""
    _check_p(p)
    if input.dim() not in (3, 4):
        raise ValueError(f"dropout2d: expected 3-D or 4-D input, got {input.dim()}-D")
    batched = input if input.dim() == 4 else input.unsqueeze(0)
    out = _ops.feature_dropout(batched, p, training)
    if input.dim() == 3:
        out = out.squeeze(0)
    return input.copy_(out) if inplace else out


# ---- linear and convolution ----

def linear(input, weight, bias=None):
    return _ops.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    return _C.nn._bilinear(input1, input2, weight, bias)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _ops.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _ops.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _ops.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups,
                                 dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _ops.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                                 dilation)


# ---- pooling ----

def _stride(stride):
    return [] if stride is None else stride


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return _ops.max_pool2d_with_indices(input, kernel_size, _stride(stride), padding, dilation,
                                        ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _ops.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _ops.avg_pool2d(input, kernel_size, _stride(stride), padding, ceil_mode,
                           count_include_pad, divisor_override)


def _single(v):
    return v[0] if isinstance(v, (tuple, list)) else v


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    # As 2-d pooling over (..., 1, L): the flat index h * L + w is the 1-d index.
    stride = _single(kernel_size if stride is None else stride)
    args = ([1, _single(kernel_size)], [1, stride], [0, _single(padding)],
            [1, _single(dilation)], ceil_mode)
    x = input.unsqueeze(-2)
    if return_indices:
        out, indices = _ops.max_pool2d_with_indices(x, *args)
        return out.squeeze(-2), indices.squeeze(-2)
    return _ops.max_pool2d(x, *args).squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    stride = _single(kernel_size if stride is None else stride)
    return _ops.avg_pool2d(input.unsqueeze(-2), [1, _single(kernel_size)], [1, stride],
                           [0, _single(padding)], ceil_mode, count_include_pad).squeeze(-2)


def _output_size(input, output_size, dims):
    # None entries keep the input's size, as PyTorch.
    sizes = [output_size] * dims if isinstance(output_size, numbers.Integral) or \
        output_size is None else list(output_size)
    return [input.size(input.dim() - dims + i) if s is None else s for i, s in enumerate(sizes)]


def adaptive_avg_pool2d(input, output_size):
    return _ops.adaptive_avg_pool2d(input, _output_size(input, output_size, 2))


def adaptive_avg_pool1d(input, output_size):
    size = _output_size(input, output_size, 1)[0]
    return _ops.adaptive_avg_pool2d(input.unsqueeze(-2), [1, size]).squeeze(-2)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    out, indices = _ops.adaptive_max_pool2d(input, _output_size(input, output_size, 2))
    return (out, indices) if return_indices else out


# ---- normalization ----

def _shape(normalized_shape):
    return [normalized_shape] if isinstance(normalized_shape, numbers.Integral) \
        else list(normalized_shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _ops.layer_norm(input, _shape(normalized_shape), weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _ops.rms_norm(input, _shape(normalized_shape), weight, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return _ops.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    return _ops.batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                           eps, False)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = _ops.linalg_vector_norm(input, p, [dim], True).clamp_min(eps).expand_as(input)
    if out is not None:
        return _ops.div(input, denom, out=out)
    return input / denom


# ---- sparse ----

def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if max_norm is not None:
        raise NotImplementedError("embedding: max_norm is not supported")
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0:
        if padding_idx < -weight.size(0):
            raise ValueError("Padding_idx must be within num_embeddings")
        padding_idx = weight.size(0) + padding_idx
    elif padding_idx >= weight.size(0):
        raise ValueError("Padding_idx must be within num_embeddings")
    return _ops.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def one_hot(tensor, num_classes=-1):
    return _ops.one_hot(tensor, num_classes)


# ---- distances ----

def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    x1, x2 = _ops.broadcast_tensors([x1, x2])
    n1 = _ops.linalg_vector_norm(x1, 2, [dim], True).clamp_min(eps)
    n2 = _ops.linalg_vector_norm(x2, 2, [dim], True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return _ops.linalg_vector_norm(x1 - x2 + eps, p, [-1], keepdim)


# ---- losses ----

def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    return _ops.cross_entropy_loss(input, target, weight,
                                   _reduction_code(reduction, size_average, reduce),
                                   ignore_index, label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    return _ops.nll_loss_nd(input, target, weight,
                            _reduction_code(reduction, size_average, reduce), ignore_index)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _ops.mse_loss(input, target, _reduction_code(reduction, size_average, reduce))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _ops.l1_loss(input, target, _reduction_code(reduction, size_average, reduce))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    return _ops.smooth_l1_loss(input, target, _reduction_code(reduction, size_average, reduce),
                               beta)


def huber_loss(input, target, reduction="mean", delta=1.0):
    return _ops.huber_loss(input, target, _reduction_code(reduction), delta)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({tuple(target.shape)}) that is different to the "
                         f"input size ({tuple(input.shape)}) is deprecated. Please ensure they "
                         "have the same size.")
    return _ops.binary_cross_entropy(input, target, weight,
                                     _reduction_code(reduction, size_average, reduce))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({tuple(target.shape)}) must be the same as input size "
                         f"({tuple(input.shape)})")
    return _ops.binary_cross_entropy_with_logits(
        input, target, weight, pos_weight, _reduction_code(reduction, size_average, reduce))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction == "batchmean":
        out = _ops.kl_div(input, target, 2, log_target=log_target)
        return out / input.size(0) if input.dim() != 0 else out
    return _ops.kl_div(input, target, _reduction_code(reduction), log_target=log_target)


# ---- attention, shape, resampling ----

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    return _ops.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                             scale=scale, enable_gqa=enable_gqa)


def pad(input, pad, mode="constant", value=None):  # noqa: A002
    return _ops.pad(input, list(pad), mode, value)


def pixel_shuffle(input, upscale_factor):
    return _ops.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return _ops.pixel_unshuffle(input, downscale_factor)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """mode: "nearest", "nearest-exact", "linear" (3-D input) or "bilinear" (4-D input)."""
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    if size is not None and not isinstance(size, (list, tuple)):
        size = [size]
    if scale_factor is not None and not isinstance(scale_factor, (list, tuple)):
        scale_factor = [scale_factor]
    return _C.nn._interpolate(input, None if size is None else list(size),
                              None if scale_factor is None else [float(s) for s in scale_factor],
                              mode, align_corners, recompute_scale_factor)

