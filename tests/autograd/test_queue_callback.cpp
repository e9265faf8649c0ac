// autograd::queue_callback: work that runs once a backward pass has gone through its graph.
#include <gtest/gtest.h>
#include <kiln/autograd/queue_callback.h>
#include <kiln/kiln.h>

#include <string>
#include <vector>

namespace kiln {
namespace {

TEST(AutogradQueueCallback, RunsAfterEveryGradientOfThePass) {
  Tensor a = ones({2}).requires_grad_(), b = ones({3}).requires_grad_();
  std::vector<std::string> events;
  std::vector<double> seen;  // the leaves' gradients when the callback runs
  a.register_hook([&](const Tensor&) {
    events.push_back("hook a");
    autograd::queue_callback([&] {
      events.push_back("callback");
      seen.push_back(a.grad().sum().item<double>());
      seen.push_back(b.grad().sum().item<double>());
    });
    return Tensor();
  });
  b.register_hook([&](const Tensor&) {
    events.push_back("hook b");
    return Tensor();
  });
  (a.mul(2).sum() + b.mul(3).sum()).backward();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events.back(), "callback");
  // d/da sum(2a) = 2 per element (2 elements), d/db sum(3b) = 3 per element (3 elements).
  EXPECT_EQ(seen, (std::vector<double>{4, 9}));
}

TEST(AutogradQueueCallback, CallbacksRunInOrderAndMayQueueMore) {
  Tensor a = ones({2}).requires_grad_();
  std::vector<int> order;
  a.register_hook([&](const Tensor&) {
    autograd::queue_callback([&] {
      order.push_back(1);
      autograd::queue_callback([&] { order.push_back(3); });
    });
    autograd::queue_callback([&] { order.push_back(2); });
    return Tensor();
  });
  a.sum().backward();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  order.clear();
  a.sum().backward();  // a new pass queues afresh; nothing left over from the last one
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(AutogradQueueCallback, AnErrorInACallbackEndsBackward) {
  Tensor a = ones({2}).requires_grad_();
  a.register_hook([&](const Tensor&) {
    autograd::queue_callback([] { KILN_FAIL("callback failed"); });
    return Tensor();
  });
  EXPECT_THROW(a.sum().backward(), Error);
}

TEST(AutogradQueueCallback, OutsideBackwardIsAnError) {
  try {
    autograd::queue_callback([] {});
    FAIL() << "queue_callback outside backward did not raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no backward pass runs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
