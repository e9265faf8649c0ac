#include "ops/dropout/dropout_kernels.h"
// loops.h after the kernels header: it needs capability.h's namespace macro.
#include "ops/cpu/loops.h"

#include <kiln/core/parallel.h>

#include <cmath>
#include <limits>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

void dropout_kernel(const void* in, void* out, bool* mask, DType dtype, int64_t n, double p,
                    random_detail::PhiloxStream stream) {
  // keep when u = (word >> 8) / 2^24, rand's float32 uniform from the same word, is below
  // float(1 - p) (rand(float32) < 1 - p, the decomposition, compares in float32): for the integer
  // word >> 8 that is being below ceil(float(1 - p) * 2^24), exact in double.
  const double keep_probability = 1.0 - p;
  const auto threshold = static_cast<uint32_t>(
      std::ceil(static_cast<double>(static_cast<float>(keep_probability)) * 16777216.0));
  KILN_DISPATCH_FLOATING(dtype, "native_dropout", [&]<typename T>() {
    using Op = opmath_t<T>;
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    const Op scale = keep_probability == 0.0 ? Op(0) : static_cast<Op>(1.0 / keep_probability);
    parallel_for(0, n, kGrainSize, [&](int64_t begin, int64_t end) {
      uint64_t cached = std::numeric_limits<uint64_t>::max();
      random_detail::PhiloxBlock block{};
      for (int64_t i = begin; i < end; ++i) {
        const uint64_t word = static_cast<uint64_t>(i) * ops::kDropoutWords;
        if (word / 4 != cached) {
          cached = word / 4;
          block = random_detail::philox_block(stream.offset + cached, 0, stream.seed);
        }
        const bool keep = (block[word % 4] >> 8) < threshold;
        mask[i] = keep;
        y[i] = T(static_cast<Op>(x[i]) * (keep ? scale : Op(0)));
      }
    });
  });
}

}  // namespace
KILN_REGISTER_KERNEL(ops::dropout_kernels, &dropout_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
