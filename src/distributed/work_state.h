#pragma once
// The state a Work handle shares with whatever runs the collective: a backend's worker thread
// (QueuedWorkState) or a GPU stream (the nccl backend's state, src/cuda/process_group_nccl.cpp).
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

namespace kiln::distributed::detail {

class WorkState {
 public:
  explicit WorkState(std::string description) : description_(std::move(description)) {}
  virtual ~WorkState() = default;
  WorkState(const WorkState&) = delete;
  WorkState& operator=(const WorkState&) = delete;

  // Blocks until the collective finished; raises kiln::Error with its failure's message.
  virtual void wait() = 0;
  // Orders the calling thread's current GPU stream after the collective (a host wait for work
  // that runs on the host); raises the failures known so far.
  virtual void block_current_stream() { wait(); }
  virtual bool completed() const = 0;
  virtual bool succeeded() const = 0;
  const std::string& description() const { return description_; }

 private:
  const std::string description_;
};

// Work run by a thread of the process group (the gloo backend's WorkQueue): finish() reports it.
class QueuedWorkState final : public WorkState {
 public:
  using WorkState::WorkState;

  void finish(std::optional<std::string> error);
  void wait() override;
  bool completed() const override;
  bool succeeded() const override;

 private:
  mutable std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::optional<std::string> error_;
};

}  // namespace kiln::distributed::detail
