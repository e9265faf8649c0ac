// The process-wide print options (PyTorch's torch.set_printoptions / get_printoptions).
#include <kiln/ops/print.h>

#include <mutex>

namespace kiln {

namespace {
std::mutex& options_mutex() {
  static std::mutex m;
  return m;
}
PrintOptions& current_options() {
  static PrintOptions options;
  return options;
}
}  // namespace

void set_printoptions(const PrintOptions& options) {
  KILN_CHECK(options.precision >= 0, "set_printoptions: precision must be >= 0, got {}",
             options.precision);
  KILN_CHECK(options.edgeitems >= 0, "set_printoptions: edgeitems must be >= 0, got {}",
             options.edgeitems);
  std::lock_guard<std::mutex> lock(options_mutex());
  current_options() = options;
}

PrintOptions get_printoptions() {
  std::lock_guard<std::mutex> lock(options_mutex());
  return current_options();
}

}  // namespace kiln
