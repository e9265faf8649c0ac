// hoist_size_expressions: floor divisions of the symbols named once per kernel call.
#include "inductor/size_hoisting.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln::inductor {
namespace {

TEST(SizeHoisting, SymbolDivisionsAreNamedOnceAfterTheSymbols) {
  const std::string body =
      "  const int64_t s0 = sym[0];\n"
      "  const int64_t s1 = sym[1];\n"
      "  for (int64_t i0 = 0; i0 < kiln_floordiv((kiln_floordiv((s1 + 1), 2) + 1), 2); ++i0) {\n"
      "    b0[i0 * kiln_floordiv((s1 + 1), 2) + kiln_floormod(i0, s0)] = 0;\n"
      "    b1[kiln_floordiv(i0, kiln_floormod(s0, 3L))] = 0;\n"
      "  }\n";
  const std::string want =
      "  const int64_t s0 = sym[0];\n"
      "  const int64_t s1 = sym[1];\n"
      "  [[maybe_unused]] const int64_t ks0 = kiln_floordiv((s1 + 1), 2);\n"
      "  [[maybe_unused]] const int64_t ks1 = kiln_floormod(s0, 3L);\n"
      "  [[maybe_unused]] const int64_t ks2 = kiln_floordiv((ks0 + 1), 2);\n"
      "  for (int64_t i0 = 0; i0 < ks2; ++i0) {\n"
      "    b0[i0 * ks0 + kiln_floormod(i0, s0)] = 0;\n"
      "    b1[kiln_floordiv(i0, ks1)] = 0;\n"
      "  }\n";
  EXPECT_EQ(hoist_size_expressions(body), want);
}

TEST(SizeHoisting, BodiesWithoutSymbolsOrDivisionsAreUnchanged) {
  const std::string plain = "  for (int64_t i0 = 0; i0 < 8; ++i0) b0[kiln_floordiv(i0, 2)] = 0;\n";
  EXPECT_EQ(hoist_size_expressions(plain), plain);
  const std::string symbolic = "  const int64_t s0 = sym[0];\n  b0[s0 - 1] = 0;\n";
  EXPECT_EQ(hoist_size_expressions(symbolic), symbolic);
  // A buffer read or a variable inside the call keeps it where it is.
  const std::string reads = "  const int64_t s0 = sym[0];\n  x = kiln_floordiv(b0[0], s0 + t1);\n";
  EXPECT_EQ(hoist_size_expressions(reads), reads);
}

}  // namespace
}  // namespace kiln::inductor
