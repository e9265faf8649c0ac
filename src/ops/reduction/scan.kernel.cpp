// cumsum/cumprod: inclusive scans along one dim of a contiguous tensor viewed as
// [outer, n, inner]. With inner == 1 each line is contiguous; otherwise a block of inner
// positions is scanned together, row by row, so reads stay contiguous.
#include "ops/reduction/reduce_kernels.h"

#include <kiln/core/parallel.h>

#include <algorithm>
#include <vector>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

template <typename T, bool IsProd>
void scan_typed(T* out, const T* in, int64_t outer, int64_t n, int64_t inner) {
  // Floats accumulate in double, as PyTorch's CPU scans do.
  using acc_t = std::conditional_t<std::is_floating_point_v<T>, double, T>;
  const acc_t identity = IsProd ? acc_t(1) : acc_t(0);
  auto apply = [](acc_t a, T x) {
    return IsProd ? a * static_cast<acc_t>(x) : a + static_cast<acc_t>(x);
  };
  if (inner == 1) {
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
    parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        acc_t a = identity;
        const T* src = in + o * n;
        T* dst = out + o * n;
        for (int64_t i = 0; i < n; ++i) {
          a = apply(a, src[i]);
          dst[i] = static_cast<T>(a);
        }
      }
    });
    return;
  }
  constexpr int64_t kBlock = 512;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * kBlock, 1));
  parallel_for(0, outer * blocks, grain, [&](int64_t b, int64_t e) {
    std::vector<acc_t> acc(static_cast<size_t>(std::min(inner, kBlock)));
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / blocks, j0 = (t % blocks) * kBlock;
      const int64_t m = std::min(kBlock, inner - j0);
      std::fill(acc.begin(), acc.begin() + m, identity);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t off = (o * n + i) * inner + j0;
        for (int64_t j = 0; j < m; ++j) {
          acc[static_cast<size_t>(j)] = apply(acc[static_cast<size_t>(j)], in[off + j]);
          out[off + j] = static_cast<T>(acc[static_cast<size_t>(j)]);
        }
      }
    }
  });
}

void scan_kernel(bool is_prod, const Tensor& out, const Tensor& in, int64_t dim) {
  int64_t outer = 1, inner = 1;
  const int64_t n = in.dim() == 0 ? 1 : in.size(dim);
  for (int64_t d = 0; d < dim; ++d) outer *= in.size(d);
  for (int64_t d = dim + 1; d < in.dim(); ++d) inner *= in.size(d);
  if (outer * n * inner == 0) return;
  auto run = [&]<typename T>() {
    T* o = static_cast<T*>(out.data_ptr());
    const T* i = static_cast<const T*>(in.data_ptr());
    if (is_prod) {
      scan_typed<T, true>(o, i, outer, n, inner);
    } else {
      scan_typed<T, false>(o, i, outer, n, inner);
    }
  };
  switch (in.dtype()) {
    case DType::Float32:
      run.template operator()<float>();
      break;
    case DType::Float64:
      run.template operator()<double>();
      break;
    case DType::Int64:
      run.template operator()<int64_t>();
      break;
    default:
      detail::unsupported_dtype("cumsum", in.dtype(), "float32, float64 or int64");
  }
}

}  // namespace
KILN_REGISTER_KERNEL(ops::scan_kernels, &scan_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
