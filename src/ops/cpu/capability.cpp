#include "ops/cpu/capability.h"

#include <cstdlib>
#include <string_view>

namespace kiln::cpu {

Capability detected_capability() {
  static const Capability cap = [] {
    Capability best = Capability::DEFAULT;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = Capability::AVX2;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
      best = Capability::AVX512;
    }
    if (const char* env = std::getenv("KILN_CPU_CAPABILITY")) {
      std::string_view v(env);
      Capability cap_env = v == "default" ? Capability::DEFAULT
                           : v == "avx2"  ? Capability::AVX2
                                          : Capability::AVX512;
      if (static_cast<int>(cap_env) < static_cast<int>(best)) best = cap_env;
    }
    return best;
  }();
  return cap;
}

const char* capability_name(Capability c) {
  switch (c) {
    case Capability::DEFAULT:
      return "default";
    case Capability::AVX2:
      return "avx2";
    case Capability::AVX512:
      return "avx512";
  }
  return "?";
}

}  // namespace kiln::cpu
