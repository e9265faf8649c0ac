// kiln_dist_worker: one rank of a multi-process distributed test. The test launches it once per
// rank with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set (as torchrun would), and it writes
// what it computed to <results dir>/rank<RANK>.txt as lines "name value value ...", which the
// test compares with values worked out by hand. It runs in its own process so that the test binary
// never forks after its threads started.
//
//   kiln_dist_worker <scenario> <results dir>
//
// "nccl_<scenario>" runs the scenario on the nccl backend with CUDA tensors on cuda:LOCAL_RANK
// (one GPU per rank).
#include <kiln/kiln.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>

namespace dist = kiln::distributed;
namespace nn = kiln::nn;
using kiln::Tensor;

namespace {

// Milliseconds from `start` to now (what the timeout scenarios report).
double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - start)
                                 .count());
}

class Results {
 public:
  explicit Results(const std::string& path) : out_(path) {}
  void values(const std::string& name, const Tensor& t) {
    out_ << name;
    for (double v : t.to(kiln::kCPU).tolist<double>()) out_ << ' ' << v;
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

// Where the scenario runs: the gloo backend with CPU tensors, or (nccl_ scenarios) the nccl
// backend with tensors on this rank's GPU. Set once by main before the scenario starts.
struct Placement {
  std::string backend = "gloo";
  kiln::Device device = kiln::kCPU;
};
Placement& placement() {
  static Placement instance;
  return instance;
}

kiln::TensorOptions options(kiln::DType dtype) {
  return kiln::TensorOptions(dtype).device(placement().device);
}

// The process group's options: everything else from the environment.
dist::InitOptions init_options(std::chrono::milliseconds timeout = dist::InitOptions{}.timeout) {
  dist::InitOptions init;
  init.backend = placement().backend;
  init.timeout = timeout;
  return init;
}

// Every collective with rank r contributing r+1 (and friends), in float32 and int64.
void collectives(Results& results) {
  dist::init_process_group(init_options());  // everything else from the environment
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
  dist::InitOptions init = init_options(std::chrono::seconds(10));
  init.rank = rank;
  init.world_size = world;
  init.store = store;
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
  dist::InitOptions init = init_options(std::chrono::milliseconds(2000));
  auto start = std::chrono::steady_clock::now();
  try {
    dist::init_process_group(init);
    results.number("initialized", 1);
  } catch (const kiln::Error& e) {
    results.error(e.what());
  }
  results.number("elapsed_ms", milliseconds_since(start));
}

// Both ranks meet; rank 1 then exits without a word and rank 0's all_reduce must fail.
void peer_dies(Results& results) {
  dist::InitOptions init = init_options(std::chrono::milliseconds(2000));
  dist::init_process_group(init);
  dist::barrier();
  if (dist::get_rank() == 1) std::_Exit(0);
  auto start = std::chrono::steady_clock::now();
  Tensor t = kiln::ones({4}, options(kiln::kFloat32));
  try {
    // The first may still go out before rank 1's sockets close; the peer is gone by the second.
    dist::all_reduce(t);
    dist::all_reduce(t);
    results.number("completed", 1);
  } catch (const kiln::Error& e) {
    results.error(e.what());
  }
  results.number("elapsed_ms", milliseconds_since(start));
  dist::destroy_process_group();
}

// Both ranks meet; rank 1 then stops calling collectives for longer than the timeout. Rank 0's
// async all_reduce must fail within about the timeout, and wait() must raise it.
void peer_stalls(Results& results) {
  dist::InitOptions init = init_options(std::chrono::milliseconds(1000));
  dist::init_process_group(init);
  dist::barrier();
  if (dist::get_rank() == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    std::_Exit(0);
  }
  auto start = std::chrono::steady_clock::now();
  Tensor t = kiln::ones({4}, options(kiln::kFloat32));
  dist::Work work = dist::all_reduce(t, dist::ReduceOp::Sum, /*async_op=*/true);
  results.number("completed_at_once", work.is_completed() ? 1 : 0);
  try {
    work.wait();
    results.number("completed", 1);
  } catch (const kiln::Error& e) {
    results.error(e.what());
  }
  results.number("success", work.is_success() ? 1 : 0);
  results.number("elapsed_ms", milliseconds_since(start));
  dist::destroy_process_group();
}

// The ranks disagree on the size of an all_reduce: each must fail with an error, not hang.
void mismatched_sizes(Results& results) {
  dist::InitOptions init = init_options(std::chrono::milliseconds(1000));
  dist::init_process_group(init);
  auto start = std::chrono::steady_clock::now();
  Tensor t = kiln::ones({3 + 2 * dist::get_rank()}, options(kiln::kFloat32));
  try {
    dist::all_reduce(t);
    results.number("completed", 1);
  } catch (const kiln::Error& e) {
    results.error(e.what());
  }
  results.number("elapsed_ms", milliseconds_since(start));
  dist::destroy_process_group();
}

// ---- DistributedDataParallel: each rank trains a DDP replica on its slice of a global batch and
// compares it with a model trained in this process on the whole batch (the reference), starting
// from rank 0's initialization. Rank r's replica starts from its own seed: equal results also
// show that the construction broadcast rank 0's parameters.

constexpr int64_t kLocalBatch = 4;

std::shared_ptr<nn::Sequential> make_mlp(uint64_t seed, const std::vector<int64_t>& widths) {
  kiln::manual_seed(seed);
  auto mlp = std::make_shared<nn::Sequential>();
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    mlp->push_back(std::make_shared<nn::Linear>(widths[i], widths[i + 1]));
    if (i + 2 < widths.size()) mlp->push_back(std::make_shared<nn::Tanh>());
  }
  mlp->to(placement().device);
  return mlp;
}

// max |a - b| / max |b|.
double relative_error(const Tensor& a, const Tensor& b) {
  std::vector<double> va = a.to(kiln::kCPU).tolist<double>(),
                      vb = b.to(kiln::kCPU).tolist<double>();
  if (va.size() != vb.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (size_t k = 0; k < va.size(); ++k) {
    diff = std::max(diff, std::abs(va[k] - vb[k]));
    scale = std::max(scale, std::abs(vb[k]));
  }
  return scale == 0 ? diff : diff / scale;
}

// relative_error over each pair of parameters, the worst one.
double max_relative_error(const nn::Module& a, const nn::Module& b) {
  std::vector<Tensor> pa = a.parameters(), pb = b.parameters();
  if (pa.size() != pb.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < pa.size(); ++i) worst = std::max(worst, relative_error(pa[i], pb[i]));
  return worst;
}

kiln::optim::SGD make_sgd(const std::vector<Tensor>& params, double momentum) {
  kiln::optim::SGDOptions options;
  options.lr = 0.1;
  options.momentum = momentum;
  return kiln::optim::SGD(params, options);
}

// The global batch, the same on every rank, and this rank's rows of it.
struct Batch {
  Tensor x, y, local_x, local_y;
};
Batch make_batch(int rank, int world, int64_t in, int64_t out) {
  kiln::manual_seed(1234);
  Batch b;
  b.x = kiln::randn({world * kLocalBatch, in});
  b.y = kiln::randn({world * kLocalBatch, out});
  b.x = b.x.to(placement().device);
  b.y = b.y.to(placement().device);
  b.local_x = b.x.narrow(0, rank * kLocalBatch, kLocalBatch);
  b.local_y = b.y.narrow(0, rank * kLocalBatch, kLocalBatch);
  return b;
}

dist::InitOptions short_timeout(int ms) { return init_options(std::chrono::milliseconds(ms)); }

// How many pieces kiln::compile(ddp) cut its graph into, read from the ddp log channel
// ("graph 0 of Sequential: 3 pieces for ...") while it lives.
class PieceCount {
 public:
  PieceCount() {
    kiln::logs::set_enabled("ddp");
    previous_ = kiln::logs::set_sink([this](kiln::logs::Channel, std::string_view message) {
      const size_t colon = message.find(": ");
      if (colon != std::string_view::npos)
        pieces = std::atof(std::string(message.substr(colon + 2)).c_str());
    });
  }
  ~PieceCount() {
    kiln::logs::set_sink(previous_);
    kiln::logs::set_enabled("");
  }
  PieceCount(const PieceCount&) = delete;
  PieceCount& operator=(const PieceCount&) = delete;
  double pieces = 0;

 private:
  kiln::logs::Sink previous_;
};

// Three SGD steps (momentum 0.9) of an MLP; bucket_cap_mb small enough splits it in buckets.
// compiled_with: kiln::compile(ddp) with that backend, the wrapped module compiled inside DDP's
// eager forward, its graph cut at the buckets (the pieces are reported).
void ddp_training(Results& results, double bucket_cap_mb, const std::string& compiled_with = "") {
  PieceCount piece_count;
  dist::init_process_group(short_timeout(10000));
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const std::vector<int64_t> widths = {4, 8, 8, 3};
  Batch batch = make_batch(rank, world, 4, 3);
  auto replica = make_mlp(100 + rank, widths);
  nn::DistributedDataParallelOptions options;
  options.bucket_cap_mb = bucket_cap_mb;
  auto ddp = std::make_shared<nn::DistributedDataParallel>(replica, options);
  if (!compiled_with.empty()) ddp = kiln::compile(ddp, {.backend = compiled_with});
  auto reference = make_mlp(100, widths);
  results.number("initial_error", max_relative_error(*replica, *reference));
  results.number("buckets", static_cast<double>(ddp->bucket_parameter_names().size()));
  auto sgd = make_sgd(ddp->parameters(), 0.9),
       reference_sgd = make_sgd(reference->parameters(), 0.9);
  for (int step = 0; step < 3; ++step) {
    sgd.zero_grad();
    kiln::mse_loss((*ddp)(batch.local_x), batch.local_y).backward();
    sgd.step();
    reference_sgd.zero_grad();
    kiln::mse_loss((*reference)(batch.x), batch.y).backward();
    reference_sgd.step();
  }
  results.number("relative_error", max_relative_error(*replica, *reference));
  results.number("pieces", piece_count.pieces);
  dist::destroy_process_group();
  results.number("done", 1);
}

void ddp_mlp(Results& results) { ddp_training(results, 25); }
void ddp_compiled(Results& results) { ddp_training(results, 20.0 / (1024 * 1024), "inductor"); }
void ddp_compiled_aot_eager(Results& results) {
  ddp_training(results, 20.0 / (1024 * 1024), "aot_eager");
}
// 20 bytes: every bucket closes at its first tensor of 20 bytes or more.
void ddp_tiny_buckets(Results& results) { ddp_training(results, 20.0 / (1024 * 1024)); }

// Two micro-steps per step, the first under no_sync: the gradients the second one reduces are
// the sum of both, and each half-batch loss is weighted 1/2, so a step equals the full batch's.
void ddp_no_sync(Results& results) {
  dist::init_process_group(short_timeout(10000));
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const std::vector<int64_t> widths = {4, 8, 3};
  Batch batch = make_batch(rank, world, 4, 3);
  auto replica = make_mlp(200 + rank, widths);
  auto ddp = std::make_shared<nn::DistributedDataParallel>(replica);
  auto reference = make_mlp(200, widths);
  auto sgd = make_sgd(ddp->parameters(), 0.9),
       reference_sgd = make_sgd(reference->parameters(), 0.9);
  const int64_t half = kLocalBatch / 2;
  double local_only = -1;  // how far the no_sync gradient is from this rank's own
  for (int step = 0; step < 3; ++step) {
    sgd.zero_grad();
    {
      auto no_sync = ddp->no_sync();
      kiln::mse_loss((*ddp)(batch.local_x.narrow(0, 0, half)), batch.local_y.narrow(0, 0, half))
          .mul(0.5)
          .backward();
    }
    if (step == 0) {
      // The same micro-step on a plain copy of the replica's weights, without DDP.
      auto copy = make_mlp(200, widths);
      copy->load_state_dict(replica->state_dict());
      kiln::mse_loss((*copy)(batch.local_x.narrow(0, 0, half)), batch.local_y.narrow(0, 0, half))
          .mul(0.5)
          .backward();
      local_only = relative_error(replica->parameters()[0].grad(), copy->parameters()[0].grad());
    }
    kiln::mse_loss((*ddp)(batch.local_x.narrow(0, half, half)), batch.local_y.narrow(0, half, half))
        .mul(0.5)
        .backward();
    sgd.step();
    reference_sgd.zero_grad();
    kiln::mse_loss((*reference)(batch.x), batch.y).backward();
    reference_sgd.step();
  }
  results.number("no_sync_gradient_error", local_only);
  results.number("relative_error", max_relative_error(*replica, *reference));
  dist::destroy_process_group();
  results.number("done", 1);
}

// A trunk and two heads; head b only runs when use_b.
class TwoHeads : public nn::Module {
 public:
  explicit TwoHeads(uint64_t seed) : Module("TwoHeads") {
    kiln::manual_seed(seed);
    trunk = register_module("trunk", std::make_shared<nn::Linear>(4, 6));
    head_a = register_module("head_a", std::make_shared<nn::Linear>(6, 3));
    head_b = register_module("head_b", std::make_shared<nn::Linear>(6, 3));
    to(placement().device);
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = (*trunk)(x).tanh();
    Tensor out = (*head_a)(h);
    return use_b ? out + (*head_b)(h) : out;
  }
  std::shared_ptr<nn::Linear> trunk, head_a, head_b;
  bool use_b = true;
};

// find_unused_parameters: the middle step skips head b on every rank.
void ddp_unused_branch(Results& results) {
  dist::init_process_group(short_timeout(10000));
  const int rank = dist::get_rank(), world = dist::get_world_size();
  Batch batch = make_batch(rank, world, 4, 3);
  auto replica = std::make_shared<TwoHeads>(300 + rank);
  nn::DistributedDataParallelOptions options;
  options.find_unused_parameters = true;
  options.bucket_cap_mb = 40.0 / (1024 * 1024);  // head b's bucket holds nothing else
  auto ddp = std::make_shared<nn::DistributedDataParallel>(replica, options);
  auto reference = std::make_shared<TwoHeads>(300);
  // Plain SGD: a zero gradient and no gradient leave a parameter alike.
  auto sgd = make_sgd(ddp->parameters(), 0), reference_sgd = make_sgd(reference->parameters(), 0);
  Tensor head_b_before;
  for (int step = 0; step < 3; ++step) {
    replica->use_b = reference->use_b = step != 1;
    if (step == 1) head_b_before = replica->head_b->weight.clone();
    sgd.zero_grad();
    kiln::mse_loss((*ddp)(batch.local_x), batch.local_y).backward();
    if (step == 1)
      results.number("skipped_grad_is_zero",
                     replica->head_b->weight.grad().defined() &&
                             replica->head_b->weight.grad().abs().max().item<double>() == 0
                         ? 1
                         : 0);
    sgd.step();
    if (step == 1)
      results.number("skipped_change", relative_error(replica->head_b->weight, head_b_before));
    reference_sgd.zero_grad();
    kiln::mse_loss((*reference)(batch.x), batch.y).backward();
    reference_sgd.step();
  }
  results.number("relative_error", max_relative_error(*replica, *reference));
  dist::destroy_process_group();
  results.number("done", 1);
}

// broadcast_buffers: before each forward every rank takes rank 0's running statistics, then
// updates them from its own batch.
void ddp_buffers(Results& results) {
  dist::init_process_group(short_timeout(10000));
  const int rank = dist::get_rank(), world = dist::get_world_size();
  Batch batch = make_batch(rank, world, 4, 3);
  kiln::manual_seed(500);
  auto linear = std::make_shared<nn::Linear>(4, 8);
  auto norm = std::make_shared<nn::BatchNorm1d>(8);
  auto model = std::make_shared<nn::Sequential>(linear, norm, std::make_shared<nn::Tanh>(),
                                                std::make_shared<nn::Linear>(8, 3));
  model->to(placement().device);
  auto ddp = std::make_shared<nn::DistributedDataParallel>(model);
  double worst = 0;
  for (int step = 0; step < 2; ++step) {
    Tensor batch_mean;
    {
      kiln::autograd::NoGradGuard no_grad;
      // The ranks' statistics drift apart (as they would from different batches)...
      norm->running_mean.fill_(10.0 * (rank + 1));
      batch_mean = (*linear)(batch.local_x).mean({0});
    }
    kiln::mse_loss((*ddp)(batch.local_x), batch.local_y).backward();
    // ... and forward starts from rank 0's: momentum 0.1 moves 10 towards this batch's mean.
    worst = std::max(worst, relative_error(norm->running_mean, batch_mean.mul(0.1).add(9.0)));
  }
  results.number("buffer_error", worst);
  dist::destroy_process_group();
  results.number("done", 1);
}

// Rank 1 is killed after the first step; rank 0's next backward must fail within the timeout.
void ddp_rank_killed(Results& results) {
  dist::init_process_group(short_timeout(1500));
  const int rank = dist::get_rank(), world = dist::get_world_size();
  Batch batch = make_batch(rank, world, 4, 3);
  auto ddp = std::make_shared<nn::DistributedDataParallel>(make_mlp(400, {4, 8, 3}));
  kiln::mse_loss((*ddp)(batch.local_x), batch.local_y).backward();
  results.number("first_step", 1);
  if (rank == 1) ::kill(::getpid(), SIGKILL);
  auto start = std::chrono::steady_clock::now();
  try {
    for (int step = 0; step < 3; ++step)
      kiln::mse_loss((*ddp)(batch.local_x), batch.local_y).backward();
    results.number("completed", 1);
  } catch (const kiln::Error& e) {
    results.error(e.what());
  }
  results.number("elapsed_ms", milliseconds_since(start));
  dist::destroy_process_group();
}

// What the launcher gave this rank, and a collective to show the group forms from it.
void launched(Results& results) {
  for (const char* name :
       {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_PORT", "OMP_NUM_THREADS"}) {
    const char* value = std::getenv(name);
    results.number(std::string("env_") + name, value ? std::atof(value) : -1);
  }
  dist::init_process_group(short_timeout(10000));
  Tensor t = kiln::full({2}, dist::get_rank() + 1, options(kiln::kFloat32));
  dist::all_reduce(t);
  results.values("all_reduce_sum", t);
  dist::destroy_process_group();
  results.number("done", 1);
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
      {"ddp_mlp", ddp_mlp},
      {"ddp_compiled", ddp_compiled},
      {"ddp_compiled_aot_eager", ddp_compiled_aot_eager},
      {"ddp_tiny_buckets", ddp_tiny_buckets},
      {"ddp_no_sync", ddp_no_sync},
      {"ddp_unused_branch", ddp_unused_branch},
      {"ddp_buffers", ddp_buffers},
      {"ddp_rank_killed", ddp_rank_killed},
      {"launched", launched},
  };
  std::string name = argv[1];
  if (name.starts_with("nccl_")) {
    name = name.substr(5);
    const char* local_rank = std::getenv("LOCAL_RANK");
    placement() = {"nccl", kiln::Device::cuda(local_rank ? std::atoi(local_rank) : 0)};
  }
  auto scenario = scenarios.find(name);
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
