#pragma once
// Reductions over dim lists (an empty list reduces every dim), with keepdim and dtype, and scans.
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <optional>
#include <tuple>

namespace kiln {

// Integral and bool inputs sum/prod to int64 unless dtype says otherwise, as in PyTorch.
Tensor sum(const Tensor& self, IntList dims = {}, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor mean(const Tensor& self, IntList dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor prod(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor max(const Tensor& self, const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor min(const Tensor& self, const kiln::SourceLocation& loc = kiln::SourceLocation::current());
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false,
                               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false,
                               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor amax(const Tensor& self, IntList dims = {}, bool keepdim = false,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor amin(const Tensor& self, IntList dims = {}, bool keepdim = false,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// correction defaults to 1 (Bessel), as in PyTorch.
Tensor var(const Tensor& self, IntList dims = {}, std::optional<Scalar> correction = std::nullopt,
           bool keepdim = false, const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor std(const Tensor& self, IntList dims = {}, std::optional<Scalar> correction = std::nullopt,
           bool keepdim = false, const kiln::SourceLocation& loc = kiln::SourceLocation::current());
std::tuple<Tensor, Tensor> var_mean(
    const Tensor& self, IntList dims = {}, std::optional<Scalar> correction = std::nullopt,
    bool keepdim = false, const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// p: any positive number, inf (max |x|), -inf (min |x|) or 0 (count of non-zeros).
Tensor norm(const Tensor& self, const Scalar& p = 2, IntList dims = {}, bool keepdim = false,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor logsumexp(const Tensor& self, IntList dims, bool keepdim = false,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor any(const Tensor& self, const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor any(const Tensor& self, int64_t dim, bool keepdim = false,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor all(const Tensor& self, const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor all(const Tensor& self, int64_t dim, bool keepdim = false,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
