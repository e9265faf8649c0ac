#pragma once
// kiln::nn::functional: torch.nn.functional's names over kiln's ops (the ops do the work; these
// are the functional spellings, with PyTorch's argument order where it differs from aten's).
// Typical use: `namespace F = kiln::nn::functional; F::relu(F::linear(x, w, b));`.
#include <kiln/core/tensor.h>
#include <kiln/ops/attention.h>
#include <kiln/ops/conv.h>
#include <kiln/ops/dropout.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/linalg.h>
#include <kiln/ops/loss.h>
#include <kiln/ops/norm.h>
#include <kiln/ops/pool.h>
#include <kiln/ops/resample.h>
#include <kiln/ops/softmax.h>
#include <kiln/ops/unary.h>

#include <kiln/core/source_location.h>
#include <optional>

namespace kiln::nn::functional {

// ---- linear, convolution, pooling (same signatures as the ops) ----
using kiln::conv1d;
using kiln::conv2d;
using kiln::conv3d;
using kiln::conv_transpose1d;
using kiln::conv_transpose2d;
using kiln::conv_transpose3d;
using kiln::linear;
// y = x1^T W x2 + b: x1 (..., in1), x2 (..., in2), weight (out, in1, in2), bias (out).
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias = Tensor(),
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
using kiln::adaptive_avg_pool2d;
using kiln::adaptive_max_pool2d;
using kiln::avg_pool2d;
using kiln::max_pool2d;
using kiln::max_pool2d_with_indices;

// ---- activations ----
using kiln::elu;
using kiln::gelu;
using kiln::hardsigmoid;
using kiln::hardswish;
using kiln::hardtanh;
using kiln::leaky_relu;
using kiln::log_softmax;
using kiln::mish;
using kiln::relu;
using kiln::relu6;
using kiln::selu;
using kiln::sigmoid;
using kiln::silu;
using kiln::softmax;
using kiln::softplus;
using kiln::tanh;

// ---- normalization ----
using kiln::group_norm;
using kiln::layer_norm;
using kiln::rms_norm;
// F.batch_norm's argument order: running statistics before weight and bias.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  bool training = false, double momentum = 0.1, double eps = 1e-5,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// ---- dropout ----
// p must lie in [0, 1]; inplace modifies input (and returns it).
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true, bool inplace = false,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor dropout2d(const Tensor& input, double p = 0.5, bool training = true,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// ---- sparse ----
// F.embedding's argument order: indices first. padding_idx may be negative (counts from the end).
Tensor embedding(const Tensor& input, const Tensor& weight,
                 std::optional<int64_t> padding_idx = std::nullopt,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
using kiln::one_hot;

// ---- losses (options structs as in <kiln/ops/loss.h>) ----
using kiln::binary_cross_entropy;
using kiln::binary_cross_entropy_with_logits;
using kiln::cross_entropy;
using kiln::huber_loss;
using kiln::kl_div;
using kiln::l1_loss;
using kiln::mse_loss;
using kiln::nll_loss;
using kiln::smooth_l1_loss;

// ---- attention, shape ----
using kiln::interpolate;
using kiln::pad;
using kiln::scaled_dot_product_attention;

}  // namespace kiln::nn::functional
