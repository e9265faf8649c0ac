// Matrix products on a right operand packed ahead of time into oneDNN's blocked layout (inference
// freezing's weight pre-packing, for linear layers): _pack_mm_weight reorders a constant mat2 once
// for products of `rows` rows; _mm_packed is mm (plus a linear layer's bias) reading that packed
// copy. The packed copy is only a hint: sizes whose primitive wants another layout (other rows or
// threads, a dtype oneDNN does not run here) compute from mat2 itself.
#include "ops/linalg/onednn_matmul.h"
#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

std::vector<TensorMeta> pack_meta(const Stack& args) {
  const Tensor& mat2 = args[0].to_tensor();
  const int64_t rows = args[1].to_int();
  KILN_CHECK(mat2.dim() == 2, "_pack_mm_weight: expected a 2-D mat2, got {}-D", mat2.dim());
  KILN_CHECK(rows >= 0, "_pack_mm_weight: expected rows >= 0, got {}", rows);
  const int64_t bytes = mat2.dtype() == DType::Float32
                            ? linalg::onednn_packed_matmul_bytes(rows, mat2.size(0), mat2.size(1))
                            : 0;
  return {TensorMeta::contiguous({bytes}, DType::UInt8, mat2.device())};
}

void pack_impl(const Stack& args, const std::vector<Tensor>& outs) {
  if (outs[0].numel() == 0) return;
  linalg::onednn_pack_matmul_weight(outs[0], args[0].to_tensor(), args[1].to_int());
}

std::vector<TensorMeta> packed_mm_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& mat2 = args[1].to_tensor();
  const Tensor& packed = args[2].to_tensor();
  KILN_CHECK(packed.dtype() == DType::UInt8 && packed.dim() == 1,
             "_mm_packed: expected a 1-D uint8 packed_mat2, got {}-D {}", packed.dim(),
             dtype_name(packed.dtype()));
  static const auto& mm = OpRegistry::instance().get("mm");
  std::vector<TensorMeta> out = mm.meta({self, mat2});
  const Tensor bias = args[3].to_optional_tensor();
  if (bias.defined()) {
    KILN_CHECK(bias.dim() == 1 && bias.sym_size(0) == mat2.sym_size(1),
               "_mm_packed: expected a 1-D bias of size {} (mat2's columns), got a {}-D bias "
               "of {} elements",
               mat2.sym_size(1).str(), bias.dim(), bias.sym_numel().str());
    KILN_CHECK(bias.dtype() == self.dtype(),
               "_mm_packed: expected a bias of dtype {} (self's), got {}", dtype_name(self.dtype()),
               dtype_name(bias.dtype()));
  }
  return out;
}

void packed_mm_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& out = outs[0];
  if (out.numel() == 0) return;
  const Tensor& self = args[0].to_tensor();
  const Tensor& mat2 = args[1].to_tensor();
  const Tensor& packed = args[2].to_tensor();
  const Tensor bias = args[3].to_optional_tensor();
  const bool float32 = self.dtype() == DType::Float32 && mat2.dtype() == DType::Float32;
  if (float32 && self.size(1) > 0 && (!bias.defined() || bias.is_contiguous()) &&
      linalg::onednn_matmul_packed(out, self, packed, bias.defined() ? &bias : nullptr)) {
    return;
  }
  // Otherwise mm's (or addmm's) own kernel (straight to it: this runs below autograd).
  static const auto& mm = OpRegistry::instance().get("mm");
  static const auto& addmm = OpRegistry::instance().get("addmm");
  Stack product =
      bias.defined() ? Stack{bias, self, mat2, Scalar(1), Scalar(1)} : Stack{self, mat2};
  const Tensor result = call_kernel(bias.defined() ? addmm : mm, product).at(0);
  Tensor dst = out;
  dst.copy_(result);
}

// mat2 packed for products of `rows` rows (as freezing packs it).
Tensor pack_for(const Tensor& mat2, int64_t rows) {
  static const auto& op = OpRegistry::instance().get("_pack_mm_weight");
  return call1(op, {mat2, rows});
}

std::vector<Sample> pack_samples() {
  return {
      {{make_sample({96, 80}, kFloat32), int64_t{72}}, "float32"},
      {{make_sample({80, 96}, kFloat32).t(), int64_t{64}}, "column-major (a linear's weight.t())"},
      {{make_sample({8, 8}, kFloat64), int64_t{8}}, "float64 (nothing packed)"},
      {{make_sample({0, 8}, kFloat32), int64_t{4}}, "empty (nothing packed)"},
  };
}

std::vector<Sample> packed_mm_samples() {
  const Tensor x = make_sample({72, 96}, kFloat32, -3, 3, 1);
  const Tensor w = make_sample({80, 96}, kFloat32, -1, 1, 2);  // a linear layer's [out, in]
  const Tensor b = make_sample({80}, kFloat32, -1, 1, 3);
  const Tensor wide = make_sample({72, 128}, kFloat32, -3, 3, 4);
  const Tensor x64 = make_sample({5, 6}, kFloat64, -3, 3, 5);
  const Tensor w64 = make_sample({6, 4}, kFloat64, -1, 1, 6);
  const Tensor none = empty({0}, TensorOptions(kUInt8));
  return {
      {{x, w.t(), pack_for(w.t(), 72), b}, "linear layer with bias, packed"},
      {{x, w.t(), pack_for(w.t(), 72), Tensor()}, "no bias, packed"},
      {{x, w.t().contiguous(), pack_for(w.t().contiguous(), 72), b}, "row-major mat2, packed"},
      {{x.narrow(0, 0, 40), w.t(), pack_for(w.t(), 72), b}, "other rows: unpacked"},
      {{wide.narrow(1, 0, 96), w.t(), pack_for(w.t(), 72), b}, "strided self: unpacked"},
      {{x, w.t(), none, b}, "nothing packed"},
      {{x64, w64, pack_for(w64, 5), make_sample({4}, kFloat64, -1, 1, 7)},
       "float64 (addmm's kernel)"},
      {{x, w.t(), pack_for(w.t(), 72), make_sample({81}, kFloat32)}, "bias of the wrong size"},
      {{x, make_sample({95, 80}, kFloat32), none, Tensor()}, "size mismatch"},
  };
}

}  // namespace

KILN_OP("_pack_mm_weight(Tensor mat2, SymInt rows) -> Tensor")
    .meta(pack_meta)
    .cpu(pack_impl)
    .not_differentiable()
    .samples(pack_samples);

KILN_OP("_mm_packed(Tensor self, Tensor mat2, Tensor packed_mat2, Tensor? bias=None) -> Tensor")
    .meta(packed_mm_meta)
    .cpu(packed_mm_impl)
    .not_differentiable()
    .tolerance(1e-4, 1e-4)
    .samples(packed_mm_samples);

}  // namespace kiln::ops
