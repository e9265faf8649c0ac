#include "distributed/work_queue.h"

#include <exception>

namespace kiln::distributed::detail {

WorkQueue::WorkQueue(ErrorFormatter format_error)
    : format_error_(std::move(format_error)), thread_([this] { loop(); }) {}

WorkQueue::~WorkQueue() {
  std::deque<Task> abandoned;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    abandoned.swap(tasks_);
  }
  pending_.notify_all();
  for (auto& task : abandoned)
    task.state->finish(format_error_(task.state->description(),
                                     "the process group was destroyed before this work ran"));
  thread_.join();
}

Work WorkQueue::enqueue(std::string description, std::function<void()> task) {
  auto state = std::make_shared<QueuedWorkState>(std::move(description));
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back({state, std::move(task)});
  }
  pending_.notify_one();
  return Work(state);
}

void WorkQueue::loop() {
  while (true) {
    Task task;
    {
      std::unique_lock lock(mutex_);
      pending_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    std::optional<std::string> error;
    try {
      task.run();
    } catch (const std::exception& e) {
      error = format_error_(task.state->description(), e.what());
    } catch (...) {
      error = format_error_(task.state->description(), "an unknown exception");
    }
    task.run = nullptr;  // release the tensors it holds before anyone sees it finished
    task.state->finish(std::move(error));
  }
}

}  // namespace kiln::distributed::detail
