#include <kiln/capture/compile_ddp.h>

#include "capture/chosen_backend.h"
#include "capture/ddp_bucket_backend.h"

#include <kiln/core/error.h>

namespace kiln {

namespace {

// options["optimize_ddp"] (torch._dynamo.config.optimize_ddp): split the graph at the buckets
// ("true", the default) or not ("false"). Taken out of the options the backend sees.
bool take_optimize_ddp(std::map<std::string, std::string>& options) {
  auto it = options.find("optimize_ddp");
  if (it == options.end()) return true;
  const std::string value = it->second;
  options.erase(it);
  KILN_CHECK(value == "true" || value == "false",
             "compile: options[\"optimize_ddp\"] must be \"true\" or \"false\", got \"{}\"", value);
  return value == "true";
}

}  // namespace

std::shared_ptr<nn::DistributedDataParallel> compile(
    const std::shared_ptr<nn::DistributedDataParallel>& ddp, CompileOptions options) {
  KILN_CHECK(ddp != nullptr, "compile: expected a module, got a null pointer");
  if (take_optimize_ddp(options.options)) {
    options.backend = capture::ddp_bucket_backend(capture::chosen_backend(options.backend),
                                                  ddp->bucket_size_limits_bytes());
  }
  nn::ModulePtr inner = ddp->module();
  ddp->run_module_through(compile(inner, std::move(options)));
  return ddp;
}

}  // namespace kiln
