#pragma once
// A world of one that records the collectives issued on it (Avg over one rank leaves a tensor as
// it is, so all_reduce only records "all_reduce <elements>"), for tests of when DDP launches its
// bucket all-reduces relative to other events pushed on the same list.
#include <kiln/distributed/process_group.h>

#include <string>
#include <vector>

namespace kiln::testing {

class RecordingGroup : public distributed::ProcessGroup {
 public:
  explicit RecordingGroup(std::vector<std::string>& events) : ProcessGroup(0, 1), events_(events) {}
  std::string backend_name() const override { return "recording"; }
  distributed::Work all_reduce(Tensor& tensor, distributed::ReduceOp, bool) override {
    events_.push_back("all_reduce " + std::to_string(tensor.numel()));
    return {};
  }
  distributed::Work broadcast(Tensor&, int, bool) override { return {}; }
  distributed::Work all_gather(std::vector<Tensor>&, const Tensor&, bool) override { return {}; }
  distributed::Work all_gather_into_tensor(Tensor&, const Tensor&, bool) override { return {}; }
  distributed::Work reduce_scatter(Tensor&, const std::vector<Tensor>&, distributed::ReduceOp,
                                   bool) override {
    return {};
  }
  distributed::Work reduce_scatter_tensor(Tensor&, const Tensor&, distributed::ReduceOp,
                                          bool) override {
    return {};
  }
  distributed::Work barrier(bool) override { return {}; }

 private:
  std::vector<std::string>& events_;
};

}  // namespace kiln::testing
