#include "inductor/kernel_function.h"

#include "inductor/loaded_module.h"

namespace kiln::inductor {

KernelLoader cpu_kernels(std::shared_ptr<const LoadedModule> module) {
  return [module = std::move(module)](const LoopNest&, const std::string& function) {
    using Fn = void (*)(void* const*, const int64_t*);
    const auto fn = reinterpret_cast<Fn>(module->symbol(function));
    // The function keeps the module loaded.
    return KernelFunction(
        [module, fn](void* const* args, const int64_t* symbols) { fn(args, symbols); });
  };
}

}  // namespace kiln::inductor
