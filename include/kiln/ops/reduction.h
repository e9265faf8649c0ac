#pragma once
// Reductions over dim lists (an empty list reduces every dim), with keepdim and dtype, and scans.
#include <kiln/core/tensor.h>

#include <optional>
#include <tuple>

namespace kiln {

// Integral and bool inputs sum/prod to int64 unless dtype says otherwise, as in PyTorch.
Tensor sum(const Tensor& self, IntList dims = {}, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& self, IntList dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
Tensor max(const Tensor& self);
Tensor min(const Tensor& self);
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& self, IntList dims = {}, bool keepdim = false);
Tensor amin(const Tensor& self, IntList dims = {}, bool keepdim = false);
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// correction defaults to 1 (Bessel), as in PyTorch.
Tensor var(const Tensor& self, IntList dims = {}, std::optional<Scalar> correction = std::nullopt,
           bool keepdim = false);
Tensor std(const Tensor& self, IntList dims = {}, std::optional<Scalar> correction = std::nullopt,
           bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, IntList dims = {},
                                    std::optional<Scalar> correction = std::nullopt,
                                    bool keepdim = false);
// p: any positive number, inf (max |x|), -inf (min |x|) or 0 (count of non-zeros).
Tensor norm(const Tensor& self, const Scalar& p = 2, IntList dims = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& self, IntList dims, bool keepdim = false);
Tensor any(const Tensor& self);
Tensor any(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor all(const Tensor& self);
Tensor all(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt);

}  // namespace kiln
