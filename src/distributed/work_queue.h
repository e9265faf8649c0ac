#pragma once
// WorkQueue: one thread that runs a process group's collectives one after another, in the order
// they were issued (every rank must run them in the same order for them to match up).
#include <kiln/distributed/work.h>

#include "distributed/work_state.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::distributed::detail {

class WorkQueue {
 public:
  // Turns a failure of a task into the message its Work raises.
  using ErrorFormatter =
      std::function<std::string(const std::string& description, const std::string& what)>;

  explicit WorkQueue(ErrorFormatter format_error);
  // Fails the tasks that have not started, waits for the running one and joins the thread.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  Work enqueue(std::string description, std::function<void()> task);

 private:
  struct Task {
    std::shared_ptr<QueuedWorkState> state;
    std::function<void()> run;
  };
  void loop();

  ErrorFormatter format_error_;
  std::mutex mutex_;
  std::condition_variable pending_;
  std::deque<Task> tasks_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace kiln::distributed::detail
