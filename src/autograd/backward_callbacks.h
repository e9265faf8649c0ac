#pragma once
// The callbacks queued (autograd::queue_callback) during one backward pass on this thread. The
// engine opens a scope per pass; nested passes (a reentrant backward inside a node) get their own.
#include <functional>
#include <vector>

namespace kiln::autograd {

class BackwardCallbacks {
 public:
  BackwardCallbacks();
  ~BackwardCallbacks();
  BackwardCallbacks(const BackwardCallbacks&) = delete;
  BackwardCallbacks& operator=(const BackwardCallbacks&) = delete;

  // Runs the queued callbacks in order, also those they queue; each runs once.
  void run();

  // The innermost pass running on this thread; nullptr outside backward.
  static BackwardCallbacks* current();
  void add(std::function<void()> callback) { callbacks_.push_back(std::move(callback)); }

 private:
  std::vector<std::function<void()>> callbacks_;
  BackwardCallbacks* enclosing_;
};

}  // namespace kiln::autograd
