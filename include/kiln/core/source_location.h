#pragma once
// kiln::SourceLocation: std::source_location's interface built on the
// __builtin_FILE/FUNCTION/LINE/COLUMN builtins (GCC and clang), plus a constructor: the Python
// module makes one from a Python frame, so that graph breaks and graph nodes name the user's
// Python line. (clang 14 with libstdc++ has no std::source_location either.) The typed op API
// takes one on every call (the defaulted `loc` parameter naming the user's line).
#include <cstdint>

// GCC has no __builtin_COLUMN (its std::source_location uses __builtin_source_location).
#if defined(__has_builtin)
#if __has_builtin(__builtin_COLUMN)
#define KILN_BUILTIN_COLUMN() __builtin_COLUMN()
#endif
#endif
#ifndef KILN_BUILTIN_COLUMN
#define KILN_BUILTIN_COLUMN() 0
#endif

namespace kiln {

class SourceLocation {
 public:
  // As a default argument, the builtins name the caller's position (as std::source_location's
  // current() does).
  static constexpr SourceLocation current(
      const char* file = __builtin_FILE(), const char* function = __builtin_FUNCTION(),
      std::uint_least32_t line = __builtin_LINE(),
      std::uint_least32_t column = KILN_BUILTIN_COLUMN()) noexcept {
    SourceLocation loc;
    loc.file_ = file;
    loc.function_ = function;
    loc.line_ = line;
    loc.column_ = column;
    return loc;
  }
  constexpr SourceLocation() noexcept = default;
  // `file` and `function` must outlive every use of the location (interned or literal strings).
  constexpr SourceLocation(const char* file, const char* function, std::uint_least32_t line,
                           std::uint_least32_t column = 0) noexcept
      : file_(file), function_(function), line_(line), column_(column) {}
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

}  // namespace kiln
