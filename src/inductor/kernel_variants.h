#pragma once
// How the code generator writes one loop nest's function (max-autotune): the default way, or a
// variant the runtime times against it at the first call (autotune.h).
//   threads:  the nest's OpenMP-parallel loop on all threads, or on one (no parallel region:
//             small kernels lose to the fork and join); the default decides by the work.
//   vectors:  kiln's explicit Vec loops (vectorize.h), or the scalar `omp simd` loops the
//             compiler vectorizes itself.
//   chunk:    elements per chunk of a lone long loop the threads share (a nest without shared
//             loops; see codegen_cpp.cpp).
// A variant only becomes a function where its text differs from the default's (and from the
// variants before it).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::inductor {

struct NestVariant {
  std::string label = "default";
  // nullopt: in parallel when the nest's work reaches kParallelWork (the default); true: always;
  // false: never.
  std::optional<bool> parallel;
  bool explicit_vectors = true;
  int64_t chunk = 4096;
};

// The variants max-autotune tries beside the default (five at most, so that compile time stays
// small): "one_thread", "all_threads", "compiler_simd", "chunk_1024", "chunk_16384".
const std::vector<NestVariant>& autotune_variants();

}  // namespace kiln::inductor
