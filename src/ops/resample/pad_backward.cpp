// The reflect / replicate pads' backward ops, with aten's schemas (reflection_pad1d_backward, ...,
// replication_pad3d_backward): each output gradient is added back to the input position it was
// read from (edges and reflections receive several). The kernel walks the leading-dim planes in
// parallel; the decomposition (index_put with accumulate, one dim at a time) is what autograd
// differentiates and what the kernel is checked against.
#include "ops/resample/pad_common.h"
#include "ops/samples.h"
#include "ops/sizes_str.h"

#include <kiln/core/parallel.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

using namespace padding;
using IV = std::vector<int64_t>;

std::vector<TensorMeta> pad_backward_meta(const Stack& args, PadMode mode, int64_t dims,
                                          const std::string& op) {
  const Tensor& grad = args[0].to_tensor();
  const Tensor& self = args[1].to_tensor();
  const IV padding = args[2].to_int_list();
  KILN_CHECK(static_cast<int64_t>(padding.size()) == 2 * dims && self.dim() >= dims,
             "{}: expected {} pads and an input of at least {} dims, got pads {} and input {}", op,
             2 * dims, dims, sizes_str(padding), sizes_str(self.sizes()));
  check_mode_pads(self, padding, mode, op.c_str());
  IV expected(self.sizes().begin(), self.sizes().end());
  for (int64_t i = 0; i < dims; ++i) {
    expected[static_cast<size_t>(self.dim() - 1 - i)] +=
        padding[static_cast<size_t>(2 * i)] + padding[static_cast<size_t>(2 * i + 1)];
  }
  KILN_CHECK(IntList(grad.sizes()) == IntList(expected),
             "{}: expected grad_output of sizes {} (the input {} padded by {}), but got {}", op,
             sizes_str(expected), sizes_str(self.sizes()), sizes_str(padding),
             sizes_str(grad.sizes()));
  KILN_CHECK_T(TypeError, is_floating_point(grad.dtype()),
               "{}: expected a floating point grad_output, but got {}", op,
               dtype_name(grad.dtype()));
  return {TensorMeta::contiguous(self.sym_sizes().vec(), grad.dtype(), grad.device())};
}

void pad_backward_impl(const Stack& args, const Tensor& out, PadMode mode, int64_t dims) {
  const Tensor grad = args[0].to_tensor().contiguous();
  const Tensor& self = args[1].to_tensor();
  const IV padding = args[2].to_int_list();
  Tensor target = out.is_contiguous() ? out : empty(out.sizes(), out.options());
  // The padded dims as (depth, height, width), missing ones of size 1.
  std::array<std::vector<int64_t>, 3> maps{IV{0}, IV{0}, IV{0}};
  std::array<int64_t, 3> in{1, 1, 1}, outs{1, 1, 1};
  for (int64_t i = 0; i < dims; ++i) {
    const auto k = static_cast<size_t>(2 - i);
    const int64_t d = self.dim() - 1 - i;
    in[k] = self.size(d);
    outs[k] = grad.size(d);
    maps[k] = pad_source_map(mode, self.size(d), padding[static_cast<size_t>(2 * i)],
                             padding[static_cast<size_t>(2 * i + 1)]);
  }
  int64_t planes = 1;
  for (int64_t d = 0; d < self.dim() - dims; ++d) planes *= self.size(d);
  const int64_t in_plane = in[0] * in[1] * in[2], out_plane = outs[0] * outs[1] * outs[2];
  KILN_DISPATCH_FLOATING(grad.dtype(), "pad backward", [&]<typename T>() {
    using acc_t = opmath_t<T>;
    const T* g = grad.data_ptr<T>();
    T* o = target.data_ptr<T>();
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(out_plane, 1));
    parallel_for(0, planes, grain, [&](int64_t first, int64_t last) {
      std::vector<acc_t> acc(static_cast<size_t>(in_plane));
      for (int64_t p = first; p < last; ++p) {
        std::fill(acc.begin(), acc.end(), acc_t(0));
        const T* gp = g + p * out_plane;
        for (int64_t z = 0; z < outs[0]; ++z) {
          for (int64_t y = 0; y < outs[1]; ++y) {
            acc_t* row =
                acc.data() +
                (maps[0][static_cast<size_t>(z)] * in[1] + maps[1][static_cast<size_t>(y)]) * in[2];
            const T* grow = gp + (z * outs[1] + y) * outs[2];
            for (int64_t x = 0; x < outs[2]; ++x) {
              row[maps[2][static_cast<size_t>(x)]] += static_cast<acc_t>(grow[x]);
            }
          }
        }
        T* op = o + p * in_plane;
        for (int64_t i = 0; i < in_plane; ++i) op[i] = static_cast<T>(acc[static_cast<size_t>(i)]);
      }
    });
  });
  if (!target.is_same(out)) {
    Tensor dst = out;
    dst.copy_(target);
  }
}

std::vector<Sample> pad_backward_samples(int64_t dims) {
  IV spatial(static_cast<size_t>(dims), 4);
  spatial.back() = 5;
  IV batched = {2, 3};
  batched.insert(batched.end(), spatial.begin(), spatial.end());
  IV unbatched = {3};
  unbatched.insert(unbatched.end(), spatial.begin(), spatial.end());
  auto sample = [&](const IV& self_sizes, const IV& pads, DType dtype) {
    IV grad_sizes = self_sizes;
    for (int64_t i = 0; i < dims; ++i) {
      grad_sizes[grad_sizes.size() - 1 - static_cast<size_t>(i)] +=
          pads[static_cast<size_t>(2 * i)] + pads[static_cast<size_t>(2 * i + 1)];
    }
    return Stack{make_sample(grad_sizes, dtype), make_sample(self_sizes, dtype, -3, 3, 1), pads};
  };
  IV pads, crops, edges;
  for (int64_t i = 0; i < dims; ++i) {
    pads.insert(pads.end(), {2, 1});
    crops.insert(crops.end(), {-1, 3});
    edges.insert(edges.end(), {3, 3});
  }
  IV empty_batch = batched;
  empty_batch[0] = 0;
  Stack wrong = sample(batched, pads, kFloat32);
  wrong[2] = edges;
  return {
      {sample(batched, pads, kFloat32), "batched"},
      {sample(unbatched, pads, kFloat64), "unbatched"},
      {sample(batched, crops, kFloat32), "negative pad crops"},
      {sample(batched, edges, kFloat64), "pads of size - 1"},
      {sample(empty_batch, pads, kFloat32), "empty batch"},
      {wrong, "grad_output of the wrong size (raises)"},
  };
}

void declare_pad_backward(PadMode mode, int64_t dims) {
  const std::string name = fmt::format(
      "{}{}d_backward", mode == PadMode::Reflect ? "reflection_pad" : "replication_pad", dims);
  declare(OpBuilder(fmt::format("{}(Tensor grad_output, Tensor self, SymInt[{}] padding) -> Tensor",
                                name, 2 * dims))
              .meta([mode, dims, name](const Stack& a) {
                return pad_backward_meta(a, mode, dims, name);
              })
              .cpu([mode, dims](const Stack& a, const std::vector<Tensor>& outs) {
                pad_backward_impl(a, outs[0], mode, dims);
              })
              .decomposition([mode, dims, name](const Stack& a) -> std::vector<Tensor> {
                pad_backward_meta(a, mode, dims, name);  // the op's checks
                return {mode_pad_backward(a[0].to_tensor(), a[1].to_tensor(), a[2].to_int_list(),
                                          mode)};
              })
              .samples([dims] { return pad_backward_samples(dims); }));
}

KILN_REGISTER_OPS(pad_backward) {
  for (int64_t dims = 1; dims <= 3; ++dims) {
    declare_pad_backward(PadMode::Reflect, dims);
    declare_pad_backward(PadMode::Replicate, dims);
  }
}

}  // namespace
}  // namespace kiln::ops
