#include <kiln/autograd/grad_mode.h>
#include <kiln/nn/embedding.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/ops/creation.h>

namespace kiln::nn {

namespace {

std::optional<int64_t> normalize_padding_idx(std::optional<int64_t> padding_idx, int64_t n) {
  if (!padding_idx) return std::nullopt;
  KILN_CHECK(*padding_idx < n && *padding_idx >= -n,
             "Embedding: padding_idx must be within num_embeddings ({}), got {}", n, *padding_idx);
  return *padding_idx < 0 ? *padding_idx + n : *padding_idx;
}

}  // namespace

Embedding::Embedding(int64_t num_embeddings_, int64_t embedding_dim_,
                     std::optional<int64_t> padding_idx_)
    : Module("Embedding"),
      num_embeddings(num_embeddings_),
      embedding_dim(embedding_dim_),
      padding_idx(normalize_padding_idx(padding_idx_, num_embeddings_)) {
  weight = register_parameter("weight", kiln::empty({num_embeddings, embedding_dim}));
  reset_parameters();
}

std::shared_ptr<Embedding> Embedding::from_pretrained(const Tensor& embeddings, bool freeze,
                                                      std::optional<int64_t> padding_idx) {
  KILN_CHECK(embeddings.dim() == 2,
             "Embedding.from_pretrained: embeddings parameter is expected to be 2-dimensional, "
             "got {} dims",
             embeddings.dim());
  auto m = std::make_shared<Embedding>(embeddings.size(0), embeddings.size(1), padding_idx);
  {
    autograd::NoGradGuard no_grad;
    // The table takes the pretrained values as they are (the padding row included), as PyTorch.
    m->weight = m->register_parameter("weight", embeddings.detach().clone(), !freeze);
  }
  return m;
}

void Embedding::reset_parameters() {
  init::normal_(weight);
  if (padding_idx) {
    autograd::NoGradGuard no_grad;
    weight.select(0, *padding_idx).zero_();
  }
}

Tensor Embedding::forward(const Tensor& input) {
  return functional::embedding(input, weight, padding_idx);
}

std::string Embedding::extra_repr() const {
  std::string s = fmt::format("{}, {}", num_embeddings, embedding_dim);
  if (padding_idx) s += fmt::format(", padding_idx={}", *padding_idx);
  return s;
}

}  // namespace kiln::nn
