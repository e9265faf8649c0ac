// Thread-local grad and inference modes, and the query the op dispatcher asks before recording.
#include <kiln/autograd/grad_mode.h>

namespace kiln::autograd {
namespace {
thread_local bool grad_enabled = true;
thread_local bool inference_enabled = false;
}  // namespace

bool GradMode::is_enabled() { return grad_enabled; }
void GradMode::set_enabled(bool enabled) { grad_enabled = enabled; }
bool InferenceMode::is_enabled() { return inference_enabled; }
void InferenceMode::set_enabled(bool enabled) { inference_enabled = enabled; }

}  // namespace kiln::autograd
