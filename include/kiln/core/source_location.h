#pragma once
// Where user code called a kiln function: std::source_location's role. std::source_location itself
// is unusable with clang 14 on libstdc++ 12 (the library needs a builtin clang 14 lacks), and
// kiln's sanitizer build uses that pair; __builtin_FILE/__builtin_LINE in default arguments give
// the caller's position on both compilers.
#include <cstdint>

namespace kiln {

class SourceLocation {
 public:
  constexpr SourceLocation() = default;
  // The caller's file and line when used as a defaulted parameter:
  //   void f(const SourceLocation& loc = SourceLocation::current());
  static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                          uint32_t line = __builtin_LINE()) noexcept {
    return SourceLocation(file, line);
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr uint32_t line() const noexcept { return line_; }

 private:
  constexpr SourceLocation(const char* file, uint32_t line) : file_(file), line_(line) {}
  const char* file_ = "";
  uint32_t line_ = 0;
};

}  // namespace kiln
