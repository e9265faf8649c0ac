#include "inductor/kernel_variants.h"

namespace kiln::inductor {

const std::vector<NestVariant>& autotune_variants() {
  static const std::vector<NestVariant> variants = [] {
    const auto variant = [](std::string label, std::optional<bool> parallel, bool explicit_vectors,
                            int64_t chunk) {
      NestVariant v;
      v.label = std::move(label);
      v.parallel = parallel;
      v.explicit_vectors = explicit_vectors;
      v.chunk = chunk;
      return v;
    };
    const NestVariant plain;
    return std::vector<NestVariant>{
        variant("one_thread", false, true, plain.chunk),
        variant("all_threads", true, true, plain.chunk),
        variant("compiler_simd", std::nullopt, false, plain.chunk),
        variant("chunk_1024", std::nullopt, true, 1024),
        variant("chunk_16384", std::nullopt, true, 16384),
    };
  }();
  return variants;
}

}  // namespace kiln::inductor
