// im2col + GEMM convolution. Every geometry is handled as 3-d (1-d and 2-d convolutions get
// leading spatial dims of size 1); for each sample and group one GEMM through kiln's gemm_into
// (OpenBLAS for floats, exact loops for integers).
#include "ops/conv/gemm_conv.h"

#include "ops/linalg/gemm.h"

#include <kiln/core/dtype.h>
#include <kiln/ops/creation.h>

#include <array>

namespace kiln::ops::conv {
namespace {

// Spatial sizes and parameters padded to 3 dims (depth, height, width).
struct Geometry3d {
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};

  int64_t in_numel() const { return in[0] * in[1] * in[2]; }
  int64_t out_numel() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_numel() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// `image` is the side the kernel slides over: the input (forward) or the output (transposed).
Geometry3d geometry(const Tensor& image, const Tensor& cols_side, const Tensor& weight,
                    const ConvParams& p) {
  Geometry3d g;
  const int64_t spatial = p.spatial();
  for (int64_t i = 0; i < spatial; ++i) {
    const size_t d = static_cast<size_t>(3 - spatial + i);
    const size_t s = static_cast<size_t>(i);
    g.in[d] = image.size(2 + i);
    g.out[d] = cols_side.size(2 + i);
    g.kernel[d] = weight.size(2 + i);
    g.stride[d] = p.stride[s];
    g.pad[d] = p.padding[s];
    g.dil[d] = p.dilation[s];
  }
  return g;
}

// Calls f(col_offset, image_offset) for every (channel, kernel tap, output position) whose tap
// lands inside the image; col rows are (channel, kd, kh, kw), columns output positions.
template <typename F>
void for_each_tap(const Geometry3d& g, int64_t channels, F&& f) {
  const int64_t npos = g.out_numel();
  int64_t row = 0;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++row) {
          int64_t col = row * npos;
          for (int64_t od = 0; od < g.out[0]; ++od) {
            const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
            const bool d_in = id >= 0 && id < g.in[0];
            for (int64_t oh = 0; oh < g.out[1]; ++oh) {
              const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
              const bool h_in = d_in && ih >= 0 && ih < g.in[1];
              const int64_t base = ((c * g.in[0] + id) * g.in[1] + ih) * g.in[2];
              for (int64_t ow = 0; ow < g.out[2]; ++ow, ++col) {
                const int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dil[2];
                f(col, h_in && iw >= 0 && iw < g.in[2] ? base + iw : -1);
              }
            }
          }
        }
      }
    }
  }
}

template <typename T>
void im2col(const Geometry3d& g, int64_t channels, const T* image, T* cols) {
  for_each_tap(g, channels,
               [&](int64_t col, int64_t at) { cols[col] = at >= 0 ? image[at] : T(0); });
}

template <typename T>
void col2im(const Geometry3d& g, int64_t channels, const T* cols, T* image) {
  for_each_tap(g, channels, [&](int64_t col, int64_t at) {
    if (at >= 0) image[at] = static_cast<T>(image[at] + cols[col]);
  });
}

void add_bias(const Tensor& out, const Tensor& bias) {
  if (!bias.defined()) return;
  DimVector shape(static_cast<size_t>(out.dim()), 1);
  shape[1] = bias.size(0);
  Tensor o = out;
  o.add_(bias.view(shape));
}

}  // namespace

void gemm_convolution(const Tensor& out, const Tensor& input, const Tensor& weight,
                      const Tensor& bias, const ConvParams& p) {
  const DType dtype = input.dtype();
  const int64_t batch = input.size(0), groups = p.groups;
  const auto opts = TensorOptions(dtype);
  if (!p.transposed) {
    // out[n, g] (OCg x P) = W_g (OCg x ICg*K) @ cols (ICg*K x P)
    const Geometry3d g = geometry(input, out, weight, p);
    const int64_t icg = input.size(1) / groups, ocg = out.size(1) / groups;
    const int64_t rows = icg * g.kernel_numel(), npos = g.out_numel();
    Tensor cols = empty({rows, npos}, opts);
    Tensor w = weight.reshape({groups, ocg, rows});
    Tensor o = out.view({batch, groups, ocg, npos});
    Tensor x = input.view({batch, groups, icg * g.in_numel()});
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t gi = 0; gi < groups; ++gi) {
        KILN_DISPATCH_ALL_NO_BOOL(dtype, "convolution", [&]<typename scalar_t>() {
          im2col<scalar_t>(g, icg, x[n][gi].data_ptr<scalar_t>(), cols.data_ptr<scalar_t>());
        });
        linalg::gemm_into(o[n][gi], w[gi], cols, 1, 0);
      }
    }
  } else {
    // cols (OCg*K x Pin) = W_g^T (OCg*K x ICg) @ x[n, g] (ICg x Pin), scattered into out[n, g].
    const Geometry3d g = geometry(out, input, weight, p);
    const int64_t icg = input.size(1) / groups, ocg = out.size(1) / groups;
    const int64_t rows = ocg * g.kernel_numel(), npos = g.out_numel();
    Tensor cols = empty({rows, npos}, opts);
    Tensor w = weight.reshape({groups, icg, rows});
    Tensor x = input.view({batch, groups, icg, npos});
    Tensor o = out.view({batch, groups, ocg * g.in_numel()});
    Tensor zeroed = out;
    zeroed.zero_();
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t gi = 0; gi < groups; ++gi) {
        linalg::gemm_into(cols, w[gi].t(), x[n][gi], 1, 0);
        KILN_DISPATCH_ALL_NO_BOOL(dtype, "convolution", [&]<typename scalar_t>() {
          col2im<scalar_t>(g, ocg, cols.data_ptr<scalar_t>(), o[n][gi].data_ptr<scalar_t>());
        });
      }
    }
  }
  add_bias(out, bias);
}

}  // namespace kiln::ops::conv
