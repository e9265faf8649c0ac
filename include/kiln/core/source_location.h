#pragma once
// kiln::SourceLocation: std::source_location where the standard library provides it, else a
// stand-in with the same interface built on the __builtin_FILE/FUNCTION/LINE/COLUMN builtins
// (GCC and clang). clang 14 with libstdc++ has no std::source_location (libstdc++'s needs
// __builtin_source_location, which clang gained in 15), and the typed op API takes one on every
// call (the defaulted `loc` parameter naming the user's line).
#include <cstdint>
#if __has_include(<source_location>)
#include <source_location>
#endif

namespace kiln {

#if defined(__cpp_lib_source_location)
using SourceLocation = std::source_location;
#else
class SourceLocation {
 public:
  // As a default argument, the builtins name the caller's position (as std::source_location's
  // current() does).
  static constexpr SourceLocation current(
      const char* file = __builtin_FILE(), const char* function = __builtin_FUNCTION(),
      std::uint_least32_t line = __builtin_LINE(),
      std::uint_least32_t column = __builtin_COLUMN()) noexcept {
    SourceLocation loc;
    loc.file_ = file;
    loc.function_ = function;
    loc.line_ = line;
    loc.column_ = column;
    return loc;
  }
  constexpr SourceLocation() noexcept = default;
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }
  constexpr std::uint_least32_t line() const noexcept { return line_; }
  constexpr std::uint_least32_t column() const noexcept { return column_; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  std::uint_least32_t line_ = 0;
  std::uint_least32_t column_ = 0;
};
#endif

}  // namespace kiln
