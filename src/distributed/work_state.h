#pragma once
// The state a Work handle shares with the thread that runs the collective.
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

namespace kiln::distributed::detail {

class WorkState {
 public:
  explicit WorkState(std::string description) : description_(std::move(description)) {}

  void finish(std::optional<std::string> error);
  void wait();  // blocks until finish; raises kiln::Error with the failure's message
  bool completed() const;
  bool succeeded() const;
  const std::string& description() const { return description_; }

 private:
  const std::string description_;
  mutable std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::optional<std::string> error_;
};

}  // namespace kiln::distributed::detail
