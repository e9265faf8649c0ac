#pragma once
// Linear algebra: matrix products (mm, bmm, addmm, baddbmm, dot, outer), PyTorch's matmul with
// its broadcasting rules, linear, and einsum. Float32/float64 run through OpenBLAS; float16 and
// bfloat16 compute in float32; integer dtypes use a plain loop.
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <string_view>

namespace kiln {

Tensor mm(const Tensor& self, const Tensor& mat2,
          const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor bmm(const Tensor& self, const Tensor& mat2,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
             const Scalar& alpha = 1,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
               const Scalar& beta = 1, const Scalar& alpha = 1,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor dot(const Tensor& self, const Tensor& tensor,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor outer(const Tensor& self, const Tensor& vec2,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor matmul(const Tensor& self, const Tensor& other,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// y = input @ weight^T + bias, with weight [out_features, in_features]; bias may be undefined.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor einsum(std::string_view equation, TensorList tensors,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
