// pixel_shuffle / pixel_unshuffle: (*, C*r*r, H, W) <-> (*, C, H*r, W*r). Each is one copy from a
// strided read of the input (remap_copy) into a view of the contiguous output.
#include "ops/indexing/strided_loop.h"
#include "ops/samples.h"
#include "ops/sizes_str.h"

#include <kiln/ops/registry.h>
#include <kiln/ops/resample.h>
#include <kiln/ops/view.h>

namespace kiln::ops {
namespace {

void check_shuffle_input(const Tensor& self, int64_t factor, const char* op, const char* what) {
  KILN_CHECK(self.dim() >= 3,
             "{} expects input to have at least 3 dimensions, but got input with {} dimension(s)",
             op, self.dim());
  KILN_CHECK(factor > 0, "{} expects a positive {}, but got {}", op, what, factor);
}

std::vector<TensorMeta> shuffle_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t r = args[1].to_int();
  check_shuffle_input(self, r, "pixel_shuffle", "upscale_factor");
  const int64_t c = self.size(-3);
  KILN_CHECK(c % (r * r) == 0,
             "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
             "of upscale_factor, but input.size(-3)={} is not divisible by {} (input {})",
             c, r * r, sizes_str(self.sizes()));
  SymDimVector sizes = self.sym_sizes().vec();
  const size_t n = sizes.size();
  sizes[n - 3] = SymInt(c / (r * r));
  sizes[n - 2] = sizes[n - 2] * SymInt(r);
  sizes[n - 1] = sizes[n - 1] * SymInt(r);
  return {TensorMeta::contiguous(std::move(sizes), self.dtype(), self.device())};
}

std::vector<TensorMeta> unshuffle_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t r = args[1].to_int();
  check_shuffle_input(self, r, "pixel_unshuffle", "downscale_factor");
  KILN_CHECK(self.size(-2) % r == 0,
             "pixel_unshuffle expects height to be divisible by downscale_factor, but "
             "input.size(-2)={} is not divisible by {}",
             self.size(-2), r);
  KILN_CHECK(self.size(-1) % r == 0,
             "pixel_unshuffle expects width to be divisible by downscale_factor, but "
             "input.size(-1)={} is not divisible by {}",
             self.size(-1), r);
  SymDimVector sizes = self.sym_sizes().vec();
  const size_t n = sizes.size();
  sizes[n - 3] = sizes[n - 3] * SymInt(r * r);
  sizes[n - 2] = SymInt(self.size(-2) / r);
  sizes[n - 1] = SymInt(self.size(-1) / r);
  return {TensorMeta::contiguous(std::move(sizes), self.dtype(), self.device())};
}

using strided::identity_map;

// Both ops are one remap_copy over (batch, ...) views: every output dim reads the matching input
// dim through its stride, with no per-element index arithmetic beyond a table lookup.
void shuffle_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& self = args[0].to_tensor();
  const int64_t r = args[1].to_int();
  if (outs[0].numel() == 0) return;
  const int64_t c = self.size(-3) / (r * r), h = self.size(-2), w = self.size(-1);
  const int64_t batch = self.numel() / (c * r * r * h * w);
  // in (b, c, r1, r2, h, w) -> out (b, c, h, r1, w * r + r2)
  const Tensor src = self.reshape({batch, c, r, r, h, w});
  const IntList st = src.strides();
  // The last output dim interleaves w and r2: element offsets from a table (stride 1).
  std::vector<int64_t> inner(static_cast<size_t>(w * r));
  for (int64_t j = 0; j < w * r; ++j)
    inner[static_cast<size_t>(j)] = (j / r) * st[5] + (j % r) * st[3];
  Tensor target = strided::dense_target(outs[0], self.dtype());
  strided::remap_copy(
      target.view({batch, c, h, r, w * r}), src, {st[0], st[1], st[4], st[2], 1},
      {identity_map(batch), identity_map(c), identity_map(h), identity_map(r), inner});
  strided::commit(outs[0], target);
}

void unshuffle_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& self = args[0].to_tensor();
  const int64_t r = args[1].to_int();
  if (outs[0].numel() == 0) return;
  const int64_t c = self.size(-3), h = self.size(-2) / r, w = self.size(-1) / r;
  const int64_t batch = self.numel() / (c * h * r * w * r);
  // in (b, c, h, r1, w, r2) -> out (b, c, r1, r2, h, w)
  const Tensor src = self.reshape({batch, c, h, r, w, r});
  const IntList st = src.strides();
  Tensor target = strided::dense_target(outs[0], self.dtype());
  strided::remap_copy(target.view({batch, c, r, r, h, w}), src,
                      {st[0], st[1], st[3], st[5], st[2], st[4]},
                      {identity_map(batch), identity_map(c), identity_map(r), identity_map(r),
                       identity_map(h), identity_map(w)});
  strided::commit(outs[0], target);
}

// ---- decompositions: view, permute, a contiguous copy (_to_copy) and a view back ----

// self viewed as batch + split, permuted (perm over the split dims), copied and viewed as result.
Tensor permuted_copy(const Tensor& self, std::vector<int64_t> split,
                     const std::vector<int64_t>& perm, std::vector<int64_t> result) {
  static const OpDef& to_copy = OpRegistry::instance().get("_to_copy");
  const auto batch = static_cast<int64_t>(self.dim() - 3);
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().begin() + batch);
  std::vector<int64_t> dims(static_cast<size_t>(batch));
  for (int64_t d = 0; d < batch; ++d) dims[static_cast<size_t>(d)] = d;
  for (int64_t p : perm) dims.push_back(batch + p);
  std::vector<int64_t> out_sizes = sizes;
  sizes.insert(sizes.end(), split.begin(), split.end());
  out_sizes.insert(out_sizes.end(), result.begin(), result.end());
  const Tensor moved = self.reshape(sizes).permute(dims);
  return call1(to_copy, {moved, IValue(), true}).view(out_sizes);
}

// (c, r1, r2, h, w) -> (c, h, r1, w, r2).
std::vector<Tensor> shuffle_decomposition(const Stack& args) {
  shuffle_meta(args);
  const Tensor& self = args[0].to_tensor();
  const int64_t r = args[1].to_int();
  const int64_t c = self.size(-3) / (r * r), h = self.size(-2), w = self.size(-1);
  return {permuted_copy(self, {c, r, r, h, w}, {0, 3, 1, 4, 2}, {c, h * r, w * r})};
}

// (c, h, r1, w, r2) -> (c, r1, r2, h, w).
std::vector<Tensor> unshuffle_decomposition(const Stack& args) {
  unshuffle_meta(args);
  const Tensor& self = args[0].to_tensor();
  const int64_t r = args[1].to_int();
  const int64_t c = self.size(-3), h = self.size(-2) / r, w = self.size(-1) / r;
  return {permuted_copy(self, {c, h, r, w, r}, {0, 2, 4, 1, 3}, {c * r * r, h, w})};
}

}  // namespace

KILN_OP("pixel_shuffle(Tensor self, int upscale_factor) -> Tensor")
    .meta(shuffle_meta)
    .cpu(shuffle_impl)
    .decomposition(shuffle_decomposition)
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          // A permutation of elements: the inverse permutation carries the gradient back.
          return {pixel_unshuffle(a.grad_outputs[0], a.inputs[1].to_int())};
        },
        DerivativeReads::Nothing)
    .out_variant()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({2, 8, 3, 4}, kFloat32), 2}, "batched"},
          {{make_sample({9, 2, 3}, kInt64), 3}, "unbatched int64"},
          {{make_sample({2, 2, 4, 3, 2}, kFloat64), 2}, "two batch dims"},
          {{make_noncontiguous_sample({1, 4, 3, 3}, kFloat32), 2}, "non-contiguous"},
          {{make_sample({0, 4, 2, 2}, kFloat32), 2}, "empty batch"},
          {{make_sample({1, 4, 2, 2}, kFloat32), 1}, "factor 1"},
          {{make_sample({1, 6, 2, 2}, kFloat32), 2}, "channels not divisible (raises)"},
      };
    });

KILN_OP("pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor")
    .meta(unshuffle_meta)
    .cpu(unshuffle_impl)
    .decomposition(unshuffle_decomposition)
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          return {pixel_shuffle(a.grad_outputs[0], a.inputs[1].to_int())};
        },
        DerivativeReads::Nothing)
    .out_variant()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({2, 2, 4, 6}, kFloat32), 2}, "batched"},
          {{make_sample({1, 6, 9}, kInt32), 3}, "unbatched int32"},
          {{make_noncontiguous_sample({1, 2, 4, 4}, kFloat64), 2}, "non-contiguous"},
          // No empty sample: PyTorch's eager kernel returns an empty input unchanged in shape
          // ([0, 1, 2, 2] stays [0, 1, 2, 2]) while its meta function gives [0, 4, 1, 1];
          // kiln follows the meta shapes (tests/ops/test_interpolate.cpp checks it).
          {{make_sample({1, 1, 3, 4}, kFloat32), 2}, "height not divisible (raises)"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("pixel_shuffle");
  return ops::call1(op, {self, upscale_factor}, &loc);
}

Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor,
                       const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("pixel_unshuffle");
  return ops::call1(op, {self, downscale_factor}, &loc);
}

}  // namespace kiln
