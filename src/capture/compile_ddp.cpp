#include <kiln/capture/compile_ddp.h>

#include <kiln/core/error.h>

namespace kiln {

std::shared_ptr<nn::DistributedDataParallel> compile(
    const std::shared_ptr<nn::DistributedDataParallel>& ddp, CompileOptions options) {
  KILN_CHECK(ddp != nullptr, "compile: expected a module, got a null pointer");
  nn::ModulePtr inner = ddp->module();
  ddp->run_module_through(compile(inner, std::move(options)));
  return ddp;
}

}  // namespace kiln
