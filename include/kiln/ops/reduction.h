#pragma once
// Reductions over dim lists (an empty list reduces every dim), with keepdim and dtype, and scans.
#include <kiln/core/tensor.h>

#include <optional>
#include <source_location>
#include <tuple>

namespace kiln {

// Integral and bool inputs sum/prod to int64 unless dtype says otherwise, as in PyTorch.
Tensor sum(const Tensor& self, IntList dims = {}, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt,
           const std::source_location& loc = std::source_location::current());
Tensor mean(const Tensor& self, IntList dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt,
            const std::source_location& loc = std::source_location::current());
Tensor prod(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt,
            const std::source_location& loc = std::source_location::current());
Tensor max(const Tensor& self, const std::source_location& loc = std::source_location::current());
Tensor min(const Tensor& self, const std::source_location& loc = std::source_location::current());
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false,
                               const std::source_location& loc = std::source_location::current());
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false,
                               const std::source_location& loc = std::source_location::current());
Tensor amax(const Tensor& self, IntList dims = {}, bool keepdim = false,
            const std::source_location& loc = std::source_location::current());
Tensor amin(const Tensor& self, IntList dims = {}, bool keepdim = false,
            const std::source_location& loc = std::source_location::current());
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
              const std::source_location& loc = std::source_location::current());
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
              const std::source_location& loc = std::source_location::current());
// correction defaults to 1 (Bessel), as in PyTorch.
Tensor var(const Tensor& self, IntList dims = {}, std::optional<Scalar> correction = std::nullopt,
           bool keepdim = false, const std::source_location& loc = std::source_location::current());
Tensor std(const Tensor& self, IntList dims = {}, std::optional<Scalar> correction = std::nullopt,
           bool keepdim = false, const std::source_location& loc = std::source_location::current());
std::tuple<Tensor, Tensor> var_mean(
    const Tensor& self, IntList dims = {}, std::optional<Scalar> correction = std::nullopt,
    bool keepdim = false, const std::source_location& loc = std::source_location::current());
// p: any positive number, inf (max |x|), -inf (min |x|) or 0 (count of non-zeros).
Tensor norm(const Tensor& self, const Scalar& p = 2, IntList dims = {}, bool keepdim = false,
            const std::source_location& loc = std::source_location::current());
Tensor logsumexp(const Tensor& self, IntList dims, bool keepdim = false,
                 const std::source_location& loc = std::source_location::current());
Tensor any(const Tensor& self, const std::source_location& loc = std::source_location::current());
Tensor any(const Tensor& self, int64_t dim, bool keepdim = false,
           const std::source_location& loc = std::source_location::current());
Tensor all(const Tensor& self, const std::source_location& loc = std::source_location::current());
Tensor all(const Tensor& self, int64_t dim, bool keepdim = false,
           const std::source_location& loc = std::source_location::current());
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt,
              const std::source_location& loc = std::source_location::current());
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt,
               const std::source_location& loc = std::source_location::current());

}  // namespace kiln
