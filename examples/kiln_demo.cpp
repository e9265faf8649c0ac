// A short tour of kiln's eager tensors: what `scripts/run.sh` shows a new user.
#include <kiln/kiln.h>

#include <algorithm>
#include <chrono>
#include <iostream>

using namespace kiln;

namespace {
template <typename F>
double median_ms(F&& f, int iters = 15) {
  std::vector<double> times;
  f();  // warm-up
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}
}  // namespace

int main() {
  std::cout << "kiln: eager CPU tensors\n\n";
  manual_seed(0);

  Tensor a = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  std::cout << "a =\n" << a << "\n\n";
  std::cout << "a.t() (a view, no copy) =\n" << a.t() << "\n\n";
  std::cout << "a * 2 + 1 =\n" << a * 2 + 1 << "\n\n";
  std::cout << "exp(a).sum(1) = " << exp(a).sum({1}) << "\n";
  std::cout << "a.mean() = " << a.mean() << ", a.std({0}) = " << a.std({0}) << "\n";
  auto [values, indices] = a.max(1);
  std::cout << "a.max(1) = " << values << ", indices " << indices << "\n\n";

  Tensor i = arange(6, kInt32).view({2, 3});
  std::cout << "int32 + float scalar promotes like PyTorch: " << dtype_name((i + 0.5).dtype())
            << "; int32 + int scalar stays " << dtype_name((i + 2).dtype()) << "\n";
  std::cout << "randn(2, 3) =\n" << randn({2, 3}) << "\n\n";

  try {
    (void)(a + ones({4}));
  } catch (const Error& e) {
    std::cout << "errors name the op and the sizes:\n  " << e.what() << "\n\n";
  }

  const int64_t n = int64_t{1} << 22;
  Tensor x = randn({n}), y = randn({n});
  std::cout << "2^22 float32 elements, " << get_num_threads() << " threads:\n";
  std::cout << "  add  " << median_ms([&] { (void)add(x, y); }) << " ms\n";
  std::cout << "  exp  " << median_ms([&] { (void)exp(x); }) << " ms\n";
  std::cout << "  tanh " << median_ms([&] { (void)tanh(x); }) << " ms\n";
  std::cout << "  sum  " << median_ms([&] { (void)sum(x); }) << " ms\n";
  std::cout << "\nThe compiler (kiln::compile) and the benchmark suite come next; see README.md.\n";
  return 0;
}
