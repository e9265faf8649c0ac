// Invoking the C++ compiler on generated kernels (see cpp_compiler.h).
#include "inductor/cpp_compiler.h"

#include <kiln/core/error.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "inductor/subprocess.h"

namespace kiln::inductor {
namespace {

// Compiler output lines quoted in an error; the first errors are the ones that matter.
constexpr size_t kQuotedOutputLines = 40;

// An environment variable's value, or nullptr when it is unset or empty.
const char* nonempty_env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

std::vector<std::string> split_at_whitespace(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::string command_line(const std::vector<std::string>& argv) {
  return fmt::format("{}", fmt::join(argv, " "));
}

// The compiler's first output lines on lines of their own after a message; nothing if it wrote
// nothing.
std::string quoted_output(const std::string& output) {
  std::string lines = first_lines(output, kQuotedOutputLines);
  while (!lines.empty() && lines.back() == '\n') lines.pop_back();
  return lines.empty() ? lines : "\n" + lines;
}

std::string how_to_choose_compiler() {
  return "set KILN_CXX (or CXX) to a C++ compiler such as g++ or clang++";
}

// Raises the error of a failed compilation of `source` (or one that could not start).
void check_compiled(const CompilerConfig& config, const std::filesystem::path& source,
                    const std::vector<std::string>& argv, const ProcessResult& result) {
  KILN_CHECK(result.started, "C++ compiler '{}' could not be started to compile {}: {}; {}",
             config.cxx, source.string(), result.start_error, how_to_choose_compiler());
  KILN_CHECK(result.exit_status == 0, "C++ compiler '{}' failed to compile {} ({})\ncommand: {}{}",
             config.cxx, source.string(), result.status_text(), command_line(argv),
             quoted_output(result.output));
}

// Extra arguments that name linker inputs: given to a -c compilation, compilers warn (clang's
// -Wunused-command-line-argument, an error under -Werror).
bool only_for_the_linker(const std::string& arg) {
  return arg.starts_with("-l") || arg.starts_with("-L") || arg.starts_with("-Wl,") ||
         !arg.starts_with("-");
}

}  // namespace

CompilerConfig CompilerConfig::from_environment() {
  CompilerConfig config;
  const char* cxx = nonempty_env("KILN_CXX");
  if (cxx == nullptr) cxx = nonempty_env("CXX");
  config.cxx = cxx != nullptr ? cxx : "g++";
  // No floating-point contraction (g++ contracts a * b + c into a fused multiply-add by default
  // under -march=native): a value the backward recomputes must round as the forward's did, or a
  // mask like `y * y == saved minimum` matches nothing. The vector prelude's fused multiply-adds
  // are explicit.
  config.flags = {"-O3",   "-march=native", "-fopenmp",        "-shared",
                  "-fPIC", "-std=c++17",    "-fno-math-errno", "-ffp-contract=off"};
  if (const char* extra = nonempty_env("KILN_CXXFLAGS")) {
    for (std::string& flag : split_at_whitespace(extra)) config.flags.push_back(std::move(flag));
  }
  return config;
}

std::string compiler_identity(const CompilerConfig& config) {
  // A cache: --version costs a process start, and the answer is the same all along.
  static std::mutex mutex;
  static std::map<std::string, std::string> identities;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = identities.find(config.cxx);
    if (it != identities.end()) return it->second;
  }
  // Run without the lock: a slow compiler start must not block other threads' lookups.
  ProcessResult version = run_process({config.cxx, "--version"});
  KILN_CHECK(version.succeeded(), "C++ compiler '{}' {} (running '{} --version'); {}{}", config.cxx,
             version.status_text(), config.cxx, how_to_choose_compiler(),
             quoted_output(version.output));
  std::string identity = version.output.substr(0, version.output.find('\n'));
  std::lock_guard<std::mutex> lock(mutex);
  return identities.emplace(config.cxx, identity).first->second;
}

void compile_shared_object(const CompilerConfig& config, const std::filesystem::path& source,
                           const std::filesystem::path& output,
                           const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv{config.cxx};
  argv.insert(argv.end(), config.flags.begin(), config.flags.end());
  argv.insert(argv.end(), {source.string(), "-o", output.string()});
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  check_compiled(config, source, argv, run_process(argv));
}

void compile_objects(const CompilerConfig& config, std::span<const ObjectCompilation> units,
                     const std::vector<std::string>& extra_args,
                     const std::function<void(size_t)>& finished) {
  std::vector<std::string> flags{"-c"};
  for (const std::string& flag : config.flags) {
    if (flag != "-shared") flags.push_back(flag);
  }
  std::vector<std::string> compile_args;
  for (const std::string& arg : extra_args) {
    if (!only_for_the_linker(arg)) compile_args.push_back(arg);
  }
  std::vector<std::vector<std::string>> argvs;
  std::vector<ChildProcess> processes;
  argvs.reserve(units.size());
  processes.reserve(units.size());
  for (const ObjectCompilation& unit : units) {
    std::vector<std::string>& argv = argvs.emplace_back(std::vector<std::string>{config.cxx});
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {unit.source.string(), "-o", unit.object.string()});
    argv.insert(argv.end(), compile_args.begin(), compile_args.end());
    processes.emplace_back(argv);
  }
  // Every process is waited for before the first failure is reported.
  std::vector<ProcessResult> results;
  results.reserve(processes.size());
  for (ChildProcess& process : processes) {
    results.push_back(process.wait());
    if (finished) finished(results.size() - 1);
  }
  for (size_t i = 0; i < units.size(); ++i) {
    check_compiled(config, units[i].source, argvs[i], results[i]);
  }
}

void compile_precompiled_header(const CompilerConfig& config, const std::filesystem::path& header,
                                const std::filesystem::path& output,
                                const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv{config.cxx};
  for (const std::string& flag : config.flags) {
    if (flag != "-shared") argv.push_back(flag);
  }
  for (const std::string& arg : extra_args) {
    if (!only_for_the_linker(arg)) argv.push_back(arg);
  }
  argv.insert(argv.end(), {"-x", "c++-header", header.string(), "-o", output.string()});
  check_compiled(config, header, argv, run_process(argv));
}

void link_shared_object(const CompilerConfig& config,
                        std::span<const std::filesystem::path> objects,
                        const std::filesystem::path& output,
                        const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv{config.cxx};
  argv.insert(argv.end(), config.flags.begin(), config.flags.end());
  for (const std::filesystem::path& object : objects) argv.push_back(object.string());
  argv.insert(argv.end(), {"-o", output.string()});
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  ProcessResult result = run_process(argv);
  KILN_CHECK(result.started, "C++ compiler '{}' could not be started to link {}: {}; {}",
             config.cxx, output.string(), result.start_error, how_to_choose_compiler());
  KILN_CHECK(result.exit_status == 0, "C++ compiler '{}' failed to link {} ({})\ncommand: {}{}",
             config.cxx, output.string(), result.status_text(), command_line(argv),
             quoted_output(result.output));
}

}  // namespace kiln::inductor
