// kiln_dist_worker: one rank of a multi-process distributed test. The test launches it once per
// rank with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set (as torchrun would), and it writes
// what it computed to <results dir>/rank<RANK>.txt as lines "name value value ...", which the
// test compares with values worked out by hand. It runs in its own process so that the test binary
// never forks after its threads started.
//
//   kiln_dist_worker <scenario> <results dir>
#include <kiln/kiln.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>

namespace dist = kiln::distributed;
using kiln::Tensor;

namespace {

class Results {
 public:
  explicit Results(const std::string& path) : out_(path) {}
  void values(const std::string& name, const Tensor& t) {
    out_ << name;
    for (double v : t.tolist<double>()) out_ << ' ' << v;
    out_ << '\n';
    out_.flush();
  }
  void number(const std::string& name, double v) {
    out_ << name << ' ' << v << '\n';
    out_.flush();
  }
  void error(const std::string& message) {
    std::string line = message;
    for (char& c : line)
      if (c == '\n') c = ' ';
    out_ << "error " << line << '\n';
    out_.flush();
  }

 private:
  std::ofstream out_;
};

kiln::TensorOptions options(kiln::DType dtype) { return kiln::TensorOptions(dtype); }

// Every collective with rank r contributing r+1 (and friends), in float32 and int64.
void collectives(Results& results) {
  dist::init_process_group();  // everything from the environment
  int rank = dist::get_rank(), world = dist::get_world_size();
  results.number("rank", rank);
  results.number("world_size", world);
  results.number("local_rank", dist::get_local_rank());
  for (auto dtype : {kiln::kFloat32, kiln::kInt64}) {
    std::string suffix = std::string("_") + std::string(kiln::dtype_name(dtype));
    for (auto [op, name] : {std::pair{dist::ReduceOp::Sum, "sum"},
                            {dist::ReduceOp::Max, "max"},
                            {dist::ReduceOp::Min, "min"},
                            {dist::ReduceOp::Product, "product"}}) {
      Tensor t = kiln::full({3}, rank + 1, options(dtype));
      dist::all_reduce(t, op);
      results.values(std::string("all_reduce_") + name + suffix, t);
    }
    if (kiln::is_floating_point(dtype)) {
      Tensor t = kiln::full({2, 2}, rank + 1, options(dtype));
      dist::all_reduce(t, dist::ReduceOp::Avg);
      results.values("all_reduce_avg" + suffix, t);
    }
    // broadcast from rank 1: 10 * (rank + 1) + [0, 1, 2, 3] everywhere becomes rank 1's.
    Tensor b = kiln::add(kiln::arange(4, options(dtype)), 10 * (rank + 1));
    dist::broadcast(b, world > 1 ? 1 : 0);
    results.values("broadcast" + suffix, b);
    // all_gather of [r, 100 + r] in rank order.
    Tensor in = kiln::add(kiln::arange(2, options(dtype)).mul(100), rank);
    std::vector<Tensor> gathered;
    for (int i = 0; i < world; ++i) gathered.push_back(kiln::zeros({2}, options(dtype)));
    dist::all_gather(gathered, in);
    results.values("all_gather" + suffix, kiln::cat(gathered));
    Tensor flat = kiln::zeros({2 * world}, options(dtype));
    dist::all_gather_into_tensor(flat, in);
    results.values("all_gather_into_tensor" + suffix, flat);
    // reduce_scatter: inputs[i] = (r + 1) * (i + 1), so rank i gets (i + 1) * N(N+1)/2.
    std::vector<Tensor> inputs;
    for (int i = 0; i < world; ++i)
      inputs.push_back(kiln::full({2}, (rank + 1) * (i + 1), options(dtype)));
    Tensor scattered = kiln::zeros({2}, options(dtype));
    dist::reduce_scatter(scattered, inputs);
    results.values("reduce_scatter" + suffix, scattered);
    // reduce_scatter_tensor of arange(2N) + r: slice i of N * arange(2N) + N(N-1)/2.
    Tensor whole = kiln::add(kiln::arange(2 * world, options(dtype)), rank);
    Tensor slice = kiln::zeros({2}, options(dtype));
    dist::reduce_scatter_tensor(slice, whole, dist::ReduceOp::Sum);
    results.values("reduce_scatter_tensor" + suffix, slice);
  }
  // Half precisions reduce in float: small integers stay exact.
  for (auto dtype : {kiln::kFloat16, kiln::kBFloat16}) {
    std::string suffix = std::string("_") + std::string(kiln::dtype_name(dtype));
    Tensor t = kiln::full({3}, rank + 1, options(dtype));
    dist::all_reduce(t);
    results.values("all_reduce_sum" + suffix, t);
    Tensor a = kiln::full({3}, 2 * (rank + 1), options(dtype));
    dist::all_reduce(a, dist::ReduceOp::Avg);
    results.values("all_reduce_avg" + suffix, a);
  }
  // Async: five all-reduces in flight at once finish in issue order.
  std::vector<Tensor> tensors;
  std::vector<dist::Work> works;
  for (int k = 1; k <= 5; ++k) {
    tensors.push_back(kiln::full({1000}, k * (rank + 1), options(kiln::kFloat64)));
    works.push_back(dist::all_reduce(tensors.back(), dist::ReduceOp::Sum, /*async_op=*/true));
  }
  works.back().wait();
  bool in_order = true;
  for (auto& w : works) in_order = in_order && w.is_completed() && w.is_success();
  results.number("async_in_order", in_order ? 1 : 0);
  Tensor firsts = kiln::zeros({5}, options(kiln::kFloat64));
  for (int k = 0; k < 5; ++k) firsts.narrow(0, k, 1).copy_(tensors[k].narrow(0, 0, 1));
  results.values("async_values", firsts);
  dist::barrier(/*async_op=*/true).wait();
  dist::barrier();
  dist::destroy_process_group();
  results.number("done", 1);
}

// Meets through a TCPStore made by hand, passed with rank and world size explicitly.
void explicit_store(Results& results) {
  int rank = std::atoi(std::getenv("RANK")), world = std::atoi(std::getenv("WORLD_SIZE"));
  auto store = std::make_shared<dist::TCPStore>("127.0.0.1", std::atoi(std::getenv("MASTER_PORT")),
                                                world, rank == 0, std::chrono::seconds(10));
  store->add("joined", 1);
  dist::InitOptions init;
  init.rank = rank;
  init.world_size = world;
  init.store = store;
  init.timeout = std::chrono::seconds(10);
  dist::init_process_group(init);
  Tensor t = kiln::full({2}, 1.5 * (rank + 1), options(kiln::kFloat32));
  dist::all_reduce(t);
  results.values("all_reduce_sum", t);
  results.number("joined", std::stoi(store->get_string("joined")));
  dist::barrier();
  dist::destroy_process_group();
  results.number("done", 1);
}

// Rank 0 of 2 alone: rendezvous must fail within the (short) timeout, naming it.
void peer_never_arrives(Results& results) {
  dist::InitOptions init;
  init.timeout = std::chrono::milliseconds(2000);
  auto start = std::chrono::steady_clock::now();
  try {
    dist::init_process_group(init);
    results.number("initialized", 1);
  } catch (const kiln::Error& e) {
    results.error(e.what());
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  results.number("elapsed_ms",
                 std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count());
}

// Both ranks meet; rank 1 then exits without a word and rank 0's all_reduce must fail.
void peer_dies(Results& results) {
  dist::InitOptions init;
  init.timeout = std::chrono::milliseconds(2000);
  dist::init_process_group(init);
  dist::barrier();
  if (dist::get_rank() == 1) std::_Exit(0);
  auto start = std::chrono::steady_clock::now();
  Tensor t = kiln::ones({4});
  try {
    // The first may still go out before rank 1's sockets close; the peer is gone by the second.
    dist::all_reduce(t);
    dist::all_reduce(t);
    results.number("completed", 1);
  } catch (const kiln::Error& e) {
    results.error(e.what());
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  results.number("elapsed_ms",
                 std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count());
  dist::destroy_process_group();
}

// Both ranks meet; rank 1 then stops calling collectives for longer than the timeout. Rank 0's
// async all_reduce must fail within about the timeout, and wait() must raise it.
void peer_stalls(Results& results) {
  dist::InitOptions init;
  init.timeout = std::chrono::milliseconds(1000);
  dist::init_process_group(init);
  dist::barrier();
  if (dist::get_rank() == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    std::_Exit(0);
  }
  auto start = std::chrono::steady_clock::now();
  Tensor t = kiln::ones({4});
  dist::Work work = dist::all_reduce(t, dist::ReduceOp::Sum, /*async_op=*/true);
  results.number("completed_at_once", work.is_completed() ? 1 : 0);
  try {
    work.wait();
    results.number("completed", 1);
  } catch (const kiln::Error& e) {
    results.error(e.what());
  }
  results.number("success", work.is_success() ? 1 : 0);
  auto elapsed = std::chrono::steady_clock::now() - start;
  results.number("elapsed_ms",
                 std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count());
  dist::destroy_process_group();
}

// The ranks disagree on the size of an all_reduce: each must fail with an error, not hang.
void mismatched_sizes(Results& results) {
  dist::InitOptions init;
  init.timeout = std::chrono::milliseconds(1000);
  dist::init_process_group(init);
  auto start = std::chrono::steady_clock::now();
  Tensor t = kiln::ones({3 + 2 * dist::get_rank()});
  try {
    dist::all_reduce(t);
    results.number("completed", 1);
  } catch (const kiln::Error& e) {
    results.error(e.what());
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  results.number("elapsed_ms",
                 std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count());
  dist::destroy_process_group();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: kiln_dist_worker <scenario> <results dir>\n");
    return 2;
  }
  const std::map<std::string, std::function<void(Results&)>> scenarios = {
      {"collectives", collectives},
      {"explicit_store", explicit_store},
      {"peer_never_arrives", peer_never_arrives},
      {"peer_dies", peer_dies},
      {"peer_stalls", peer_stalls},
      {"mismatched_sizes", mismatched_sizes},
  };
  auto scenario = scenarios.find(argv[1]);
  if (scenario == scenarios.end()) {
    std::fprintf(stderr, "kiln_dist_worker: unknown scenario '%s'\n", argv[1]);
    return 2;
  }
  const char* rank = std::getenv("RANK");
  Results results(std::string(argv[2]) + "/rank" + (rank ? rank : "0") + ".txt");
  try {
    scenario->second(results);
  } catch (const std::exception& e) {
    results.error(e.what());
    std::fprintf(stderr, "kiln_dist_worker rank %s: %s\n", rank ? rank : "?", e.what());
    return 1;
  }
  return 0;
}
