#pragma once
// KILN_COMPILE_DEBUG=1: each compilation writes its artifacts (graphs, guards, generated source) to
// a folder, as TORCH_COMPILE_DEBUG does: <root>/run_<UTC time>-pid_<pid>/<compilation>/<file>,
// root = $KILN_COMPILE_DEBUG_DIR or ./kiln_compile_debug. Files are written whole (temporary file,
// then rename); an existing file is never overwritten (a numeric suffix is added).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::debug {

// Whether KILN_COMPILE_DEBUG is set to a true value ("1", "true", "on"); overridable for tests.
bool compile_debug_enabled();
void set_compile_debug(std::optional<bool> on);  // nullopt: back to the environment

// One compilation's folder, created on first write.
class DebugDir {
 public:
  // A folder for compilation `name` ("f_graph_0") in this process's run folder; nullopt when
  // compile debugging is off.
  static std::optional<DebugDir> for_compilation(std::string_view name);
  // Writes `content` to <folder>/<file> and returns its path. Raises kiln::Error naming the path
  // if it cannot be written.
  std::filesystem::path write(std::string_view file, std::string_view content) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit DebugDir(std::filesystem::path p) : path_(std::move(p)) {}
  std::filesystem::path path_;
};

}  // namespace kiln::debug
