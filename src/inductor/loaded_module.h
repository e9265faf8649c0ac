#pragma once
// A shared object loaded with dlopen and closed with dlclose when its owner goes away.
#include <filesystem>
#include <string>

namespace kiln::inductor {

class LoadedModule {
 public:
  // dlopen(path, RTLD_NOW | RTLD_LOCAL): every symbol is resolved now, so a module with a missing
  // dependency fails here rather than at its first call. Raises kiln::Error with dlerror()'s text.
  static LoadedModule open(const std::filesystem::path& path);

  ~LoadedModule();
  LoadedModule(LoadedModule&& other) noexcept;
  LoadedModule& operator=(LoadedModule&& other) noexcept;
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  // The address of symbol `name` (an extern "C" function or variable). Raises kiln::Error naming
  // the symbol and the module when the module does not define it.
  void* symbol(const std::string& name) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  LoadedModule(void* handle, std::filesystem::path path)
      : handle_(handle), path_(std::move(path)) {}
  void close();

  void* handle_ = nullptr;
  std::filesystem::path path_;
};

}  // namespace kiln::inductor
