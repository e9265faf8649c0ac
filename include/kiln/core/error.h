#pragma once
// kiln::Error and the checks that raise it. Every message names the op, the sizes involved and
// what was expected, so a user can fix the call without reading kiln's source.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>

namespace kiln {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Raised for an index or dim out of range (PyTorch's IndexError).
class IndexError : public Error {
 public:
  using Error::Error;
};

// Raised for a wrong dtype or unsupported type combination (PyTorch's TypeError/RuntimeError).
class TypeError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void throw_error(const std::string& message);

}  // namespace kiln

// KILN_CHECK(cond, "fmt {}", args...) raises kiln::Error with the formatted message if cond fails.
#define KILN_CHECK(cond, ...)                          \
  do {                                                 \
    if (!(cond)) [[unlikely]]                          \
      ::kiln::throw_error(::fmt::format(__VA_ARGS__)); \
  } while (0)

#define KILN_CHECK_T(ErrorType, cond, ...)         \
  do {                                             \
    if (!(cond)) [[unlikely]]                      \
      throw ErrorType(::fmt::format(__VA_ARGS__)); \
  } while (0)

#define KILN_FAIL(...) ::kiln::throw_error(::fmt::format(__VA_ARGS__))

// Internal invariant: a failure is a bug in kiln, not in the caller's input.
#define KILN_INTERNAL_ASSERT(cond)                                                  \
  do {                                                                              \
    if (!(cond)) [[unlikely]]                                                       \
      ::kiln::throw_error(                                                          \
          ::fmt::format("internal error: {} at {}:{}", #cond, __FILE__, __LINE__)); \
  } while (0)
