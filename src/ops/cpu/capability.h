#pragma once
// CPU capabilities that kernels are compiled for (see cmake/cpu_capabilities.cmake), and the
// kernel dispatch tables that pick a kernel for the running CPU.
#include <kiln/core/error.h>

#include <array>

namespace kiln::cpu {

enum class Capability : int { DEFAULT = 0, AVX2 = 1, AVX512 = 2 };
inline constexpr int kNumCapabilities = 3;

// The best capability this CPU supports; KILN_CPU_CAPABILITY=default|avx2|avx512 caps it.
Capability detected_capability();
const char* capability_name(Capability c);

// A table of one kernel per capability, filled by each capability's compilation of a
// *.kernel.cpp file. get() returns the best kernel available on this CPU.
template <typename Fn>
class KernelDispatch {
 public:
  void set(Capability c, Fn* fn) { table_[static_cast<int>(c)] = fn; }
  Fn* get() const {
    for (int c = static_cast<int>(detected_capability()); c >= 0; --c) {
      if (table_[c]) return table_[c];
    }
    KILN_FAIL("internal error: no CPU kernel registered for a kernel dispatch table");
  }
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) const {
    return get()(std::forward<Args>(args)...);
  }

 private:
  std::array<Fn*, kNumCapabilities> table_{};
};

}  // namespace kiln::cpu

// In a *.kernel.cpp: KILN_REGISTER_KERNEL(table, fn) stores fn for the capability being compiled.
#if defined(KILN_CPU_CAPABILITY)
#define KILN_CAP_ENUM_INNER(c) ::kiln::cpu::Capability::c
#define KILN_CAP_ENUM(c) KILN_CAP_ENUM_INNER(c)
#define KILN_REGISTER_KERNEL(table, fn)                                           \
  [[maybe_unused]] static const bool KILN_CONCAT(kiln_kernel_reg_, __COUNTER__) = \
      (table.set(KILN_CAP_ENUM(KILN_CPU_CAPABILITY), fn), true)
#define KILN_CAP_NAMESPACE_INNER(c) cap_##c
#define KILN_CAP_NAMESPACE_EXPAND(c) KILN_CAP_NAMESPACE_INNER(c)
// Kernel code lives in a namespace per capability so the three compilations do not collide.
#define KILN_CAP_NAMESPACE KILN_CAP_NAMESPACE_EXPAND(KILN_CPU_CAPABILITY)
#endif

#ifndef KILN_CONCAT
#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)
#endif
