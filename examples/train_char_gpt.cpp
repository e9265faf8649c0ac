// Trains a small character-level GPT on examples/data/kiln_notes.txt, then samples from it.
//
// Model: kiln::models::gpt2 with a tiny config (vocabulary = the distinct bytes of the text,
// context 64, width 128, 3 layers, 4 heads, no dropout); AdamW (lr 3e-3, weight decay 0.01),
// batches of 16 random windows of 64 characters, gradient norm clipped to 1.
// Target: the mean training loss over the last 25 steps falls below 1.4 nats per character
// (a uniform guess over the text's 54 symbols is 4.0; the loss sits near 2.4, bigram statistics,
// until step ~150, then attention starts to pay). Measured: 1.39 at step 750, 28 s on 2 idle
// cores (~28000 tokens/s); a loaded machine takes longer, still under the two minutes aimed at.
// Then it prints 200 sampled characters. Exit code 0 only when the target is reached within the
// step budget.
//
//   train_char_gpt [text file] [max steps] [target loss]
// The defaults are the shipped text, 1500 steps and 1.4; CTest runs a budget of 400 steps with a
// target of 2.0 (reached at step 325), see examples/CMakeLists.txt.
#include "example_util.h"

#include <kiln/models/gpt2.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace F = kiln::nn::functional;
using kiln::Tensor;

namespace {

#ifndef KILN_EXAMPLES_DATA_DIR
#define KILN_EXAMPLES_DATA_DIR "examples/data"
#endif

constexpr int64_t kContext = 64;
constexpr int64_t kBatch = 16;
constexpr int kReportEvery = 25;

// The characters of the text and their indices.
struct Vocabulary {
  std::vector<char> chars;  // index -> character
  int64_t index[256] = {};  // character -> index

  explicit Vocabulary(const std::string& text) {
    bool seen[256] = {};
    for (unsigned char c : text) seen[c] = true;
    for (int c = 0; c < 256; ++c) {
      if (!seen[c]) continue;
      index[c] = static_cast<int64_t>(chars.size());
      chars.push_back(static_cast<char>(c));
    }
  }
  int64_t size() const { return static_cast<int64_t>(chars.size()); }
  Tensor encode(const std::string& s) const {
    std::vector<int64_t> ids;
    ids.reserve(s.size());
    for (unsigned char c : s) ids.push_back(index[c]);
    return kiln::from_vector(ids);
  }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  KILN_CHECK(in.good(), "train_char_gpt: cannot open {}", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// kBatch random windows of kContext + 1 characters: inputs are the first kContext, targets the
// last kContext (each position predicts the next character).
std::pair<Tensor, Tensor> random_batch(const Tensor& data) {
  const int64_t n = data.size(0);
  Tensor starts = kiln::randint(0, n - kContext, {kBatch, 1}, kiln::kInt64);
  Tensor positions = starts + kiln::arange(kContext + 1, kiln::kInt64).unsqueeze(0);
  Tensor windows = data.index_select(0, positions.flatten()).view({kBatch, kContext + 1});
  return {windows.narrow(1, 0, kContext), windows.narrow(1, 1, kContext)};
}

// Draws an index from the distribution probs (V) by inverting its cumulative sum.
int64_t sample_index(const Tensor& probs) {
  const double u = kiln::rand({1}, kiln::kFloat64).item<double>();
  const int64_t below = probs.to(kiln::kFloat64).cumsum(0).lt(u).sum().item<int64_t>();
  return std::min(below, probs.size(0) - 1);
}

std::string sample(kiln::models::GPT2LMHeadModel& model, const Vocabulary& vocab,
                   const std::string& prompt, int64_t length, double temperature) {
  kiln::autograd::InferenceMode inference;
  model.eval();
  std::string text = prompt;
  for (int64_t i = 0; i < length; ++i) {
    const size_t from = text.size() > static_cast<size_t>(kContext) ? text.size() - kContext : 0;
    Tensor ids = vocab.encode(text.substr(from)).unsqueeze(0);
    Tensor logits = model.forward(ids).select(1, -1).squeeze(0);  // (V) at the last position
    text.push_back(vocab.chars[sample_index(F::softmax(logits / temperature, 0))]);
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path =
      argc > 1 ? argv[1] : std::string(KILN_EXAMPLES_DATA_DIR) + "/kiln_notes.txt";
  const int max_steps = argc > 2 ? std::stoi(argv[2]) : 1500;
  const double target_loss = argc > 3 ? std::stod(argv[3]) : 1.4;

  kiln::manual_seed(0);
  const std::string text = read_file(path);
  const Vocabulary vocab(text);
  const Tensor data = vocab.encode(text);
  std::printf("%zu characters, vocabulary of %lld\n", text.size(),
              static_cast<long long>(vocab.size()));

  kiln::models::GPT2Config config;
  config.vocab_size = vocab.size();
  config.n_positions = kContext;
  config.n_embd = 128;
  config.n_layer = 3;
  config.n_head = 4;
  config.resid_pdrop = config.embd_pdrop = config.attn_pdrop = 0.0;
  auto model = kiln::models::gpt2(config);
  std::vector<Tensor> params = model->parameters();
  int64_t num_params = 0;
  for (const Tensor& p : params) num_params += p.numel();
  std::printf("GPT: %lld layers, width %lld, %lld heads, context %lld, %lld parameters\n",
              static_cast<long long>(config.n_layer), static_cast<long long>(config.n_embd),
              static_cast<long long>(config.n_head), static_cast<long long>(kContext),
              static_cast<long long>(num_params));
  kiln::optim::AdamW optimizer(params, {.lr = 3e-3, .weight_decay = 0.01});

  model->train();
  kiln_examples::Stopwatch total, window_clock;
  double window_loss = 0;
  bool reached = false;
  int step = 0;
  while (step < max_steps && !reached) {
    auto [inputs, targets] = random_batch(data);
    Tensor logits = model->forward(inputs);
    Tensor loss = F::cross_entropy(logits.reshape({-1, vocab.size()}), targets.reshape({-1}));
    optimizer.zero_grad();
    loss.backward();
    kiln::optim::clip_grad_norm_(params, 1.0);
    optimizer.step();
    window_loss += loss.item<double>();
    if (++step % kReportEvery == 0) {
      const double mean = window_loss / kReportEvery;
      const double tokens_per_s = kReportEvery * kBatch * kContext / window_clock.seconds();
      std::printf("step %4d  loss %.4f  %.0f tokens/s  %.1f s\n", step, mean, tokens_per_s,
                  total.seconds());
      std::fflush(stdout);
      reached = mean < target_loss;
      window_loss = 0;
      window_clock.reset();
    }
  }
  std::printf("%s: loss %s %.2f after %d steps, %.1f s\n", reached ? "PASS" : "FAIL",
              reached ? "below" : "not below", target_loss, step, total.seconds());

  std::printf("\n--- 200 sampled characters (temperature 0.8) ---\n%s\n---\n",
              sample(*model, vocab, "The kiln", 200, 0.8).c_str());
  return reached ? 0 : 1;
}
