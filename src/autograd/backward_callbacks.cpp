#include "autograd/backward_callbacks.h"

#include <kiln/autograd/queue_callback.h>
#include <kiln/core/error.h>

namespace kiln::autograd {
namespace {
// Per thread: each thread runs its own backward passes (the engine runs a pass on its caller).
thread_local BackwardCallbacks* innermost = nullptr;
}  // namespace

BackwardCallbacks::BackwardCallbacks() : enclosing_(innermost) { innermost = this; }

BackwardCallbacks::~BackwardCallbacks() { innermost = enclosing_; }

BackwardCallbacks* BackwardCallbacks::current() { return innermost; }

void BackwardCallbacks::run() {
  // By index: a callback may queue another, which grows the vector.
  for (size_t i = 0; i < callbacks_.size(); ++i) {
    std::function<void()> callback = std::move(callbacks_[i]);
    callback();
  }
  callbacks_.clear();
}

void queue_callback(std::function<void()> callback) {
  BackwardCallbacks* pass = BackwardCallbacks::current();
  KILN_CHECK(pass != nullptr,
             "queue_callback: no backward pass runs on this thread; queue callbacks from a "
             "gradient hook or a backward node");
  pass->add(std::move(callback));
}

}  // namespace kiln::autograd
