#pragma once
// Writes a failing program as a standalone GoogleTest source: the program as plain registry op
// calls, its inputs drawn as the fuzzer draws them, and a test that compiles it with the failing
// configuration and expects eager's outputs, argument writes and gradients.
#include "fuzz/program.h"
#include "fuzz/runner.h"

#include <string>

namespace kiln::fuzz {

// `finding` (what failed) goes into the header comment; the test is FuzzRegression.<test_name>.
// A finding at other sizes (kAtOtherSizes in `finding`) gets a test that calls the
// compiled program at the generated sizes first, then compares at at_other_sizes(program).
std::string reproducer_cpp(const Program& program, const RunConfig& config,
                           const std::string& test_name, const std::string& finding);

// "Seed<seed>_<backend>_<shape mode>", a valid test name.
std::string reproducer_test_name(const Program& program, const RunConfig& config);

}  // namespace kiln::fuzz
