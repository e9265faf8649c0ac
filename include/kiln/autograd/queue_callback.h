#pragma once
// A callback that runs once the backward pass running on this thread has gone through its whole
// graph (PyTorch's Variable._execution_engine.queue_callback). Gradient hooks use it for work
// that needs every gradient of the pass, such as DistributedDataParallel writing the averaged
// gradients back once all its buckets were reduced.
#include <functional>

namespace kiln::autograd {

// Queues callback to run at the end of the current backward pass on this thread, after every
// node ran, in queue order (a callback may queue more). An exception from a callback ends the
// backward call with it. Raises kiln::Error when no backward pass runs on this thread.
void queue_callback(std::function<void()> callback);

}  // namespace kiln::autograd
