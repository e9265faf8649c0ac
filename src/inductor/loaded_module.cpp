// dlopen/dlclose ownership (see loaded_module.h).
#include "inductor/loaded_module.h"

#include <dlfcn.h>

#include <kiln/core/error.h>

#include <utility>

namespace kiln::inductor {
namespace {

std::string last_dl_error() {
  const char* text = ::dlerror();
  return text != nullptr ? text : "unknown error";
}

}  // namespace

LoadedModule LoadedModule::open(const std::filesystem::path& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  KILN_CHECK(handle != nullptr, "could not load {}: {}", path.string(), last_dl_error());
  return LoadedModule(handle, path);
}

LoadedModule::~LoadedModule() { close(); }

LoadedModule::LoadedModule(LoadedModule&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

LoadedModule& LoadedModule::operator=(LoadedModule&& other) noexcept {
  if (this != &other) {
    close();
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

void LoadedModule::close() {
  if (handle_ != nullptr) ::dlclose(handle_);
  handle_ = nullptr;
}

void* LoadedModule::symbol(const std::string& name) const {
  KILN_CHECK(handle_ != nullptr, "symbol '{}' requested from a moved-from module", name);
  ::dlerror();  // clear any earlier error: a symbol's address may legitimately be null
  void* address = ::dlsym(handle_, name.c_str());
  const char* error = ::dlerror();
  KILN_CHECK(error == nullptr, "module {} has no symbol '{}' ({})", path_.string(), name, error);
  return address;
}

}  // namespace kiln::inductor
