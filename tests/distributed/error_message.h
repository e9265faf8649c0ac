#pragma once
// EXPECT_ERROR_MENTIONS(statement, text): the statement raises a kiln::Error whose message
// contains text.
#include <gtest/gtest.h>
#include <kiln/core/error.h>

#include <functional>
#include <string>

namespace kiln::testing {

inline std::string error_message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace kiln::testing

#define EXPECT_ERROR_MENTIONS(statement, text)                                    \
  do {                                                                            \
    auto message_ = ::kiln::testing::error_message_of([&] { statement; });        \
    EXPECT_NE(message_.find(text), std::string::npos) << "message: " << message_; \
  } while (0)
