#pragma once
// The C++ compiler that turns generated kernels into shared objects: which one and with which
// flags (from the environment), its identity (part of the code cache key) and its invocations:
// one translation unit straight into a shared object, or several into objects at once, then
// linked.
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace kiln::inductor {

struct CompilerConfig {
  std::string cxx;                 // a program name searched in PATH, or a path
  std::vector<std::string> flags;  // every flag but the source, output and extra arguments

  // cxx from KILN_CXX, else CXX, else "g++"; the default flags (-O3 -march=native -fopenmp
  // -shared -fPIC -std=c++17 -fno-math-errno -ffp-contract=off) followed by KILN_CXXFLAGS split
  // at whitespace.
  static CompilerConfig from_environment();
};

// The first line of `<cxx> --version`, e.g. "g++ (Debian 12.2.0-14) 12.2.0"; run once per cxx
// per process. Raises kiln::Error naming the compiler if it cannot be started or fails.
std::string compiler_identity(const CompilerConfig& config);

// Runs `<cxx> <flags...> <source> -o <output> <extra_args...>` (extra arguments last, where
// libraries such as -lsleef must go). Raises kiln::Error naming the compiler, the source and the
// first 40 lines of the compiler's output if it fails or cannot be started.
void compile_shared_object(const CompilerConfig& config, const std::filesystem::path& source,
                           const std::filesystem::path& output,
                           const std::vector<std::string>& extra_args);

// One translation unit to compile into an object file.
struct ObjectCompilation {
  std::filesystem::path source;
  std::filesystem::path object;
};

// Compiles each source into its object, one compiler process per source, all started at once and
// all waited for: `<cxx> <flags but -shared...> -c <source> -o <object> <extra_args...>` without
// the extra arguments that only the linker reads (-l..., -L..., -Wl,..., and file names). Raises
// kiln::Error for the first unit (in order) that failed, as compile_shared_object does.
// `finished`, when given, is called with each unit's position once its process ended (in order).
void compile_objects(const CompilerConfig& config, std::span<const ObjectCompilation> units,
                     const std::vector<std::string>& extra_args,
                     const std::function<void(size_t)>& finished = {});

// Compiles `header` into a precompiled header at `output` with the flags and extra arguments an
// object compilation takes, so that a compilation with `-include header` finds and uses it
// (g++ and clang look for header.gch and header.pch beside the header). Raises as
// compile_shared_object does.
void compile_precompiled_header(const CompilerConfig& config, const std::filesystem::path& header,
                                const std::filesystem::path& output,
                                const std::vector<std::string>& extra_args);

// Runs `<cxx> <flags...> <objects...> -o <output> <extra_args...>`. Raises kiln::Error naming the
// compiler, the output and the first 40 lines of the compiler's output if it fails.
void link_shared_object(const CompilerConfig& config,
                        std::span<const std::filesystem::path> objects,
                        const std::filesystem::path& output,
                        const std::vector<std::string>& extra_args);

}  // namespace kiln::inductor
