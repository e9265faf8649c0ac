// kiln.models' native part (kiln._C.models): the reference models' factories, with the C++ config
// fields as keyword arguments, and the model classes whose forward takes more than one tensor
// (BERT, GPT-2) or whose top-level submodules a user replaces (ResNet's fc, ViT's heads): those
// submodules are properties that update both the registry and the member forward reads.
#include <pybind11/stl.h>

#include <kiln/models/models.h>

#include "bindings.h"

namespace kiln::python {

namespace {

using namespace pybind11::literals;
using nn::Module;

template <class M>
using Model = py::class_<M, Module, std::shared_ptr<M>>;

// A submodule member as a property. Assigning checks the C++ type the member needs, then
// replaces the registered child and the member together.
template <class M, class C, class... O>
void child_property(py::class_<M, O...>& cls, const char* name, std::shared_ptr<C> M::*member) {
  std::string key = name;
  cls.def_property(
      name, [member](const M& m) { return nn::ModulePtr(m.*member); },
      [member, key](M& m, py::handle value) {
        auto typed = std::dynamic_pointer_cast<C>(module_holder(value));
        if (!typed) {
          throw py::type_error(fmt::format(
              "{}.{}: the C++ model's forward calls it as a {}, got a {} (replace a submodule "
              "inside it, or build the model in Python)",
              m.name(), key, (m.*member) ? (m.*member)->name() : std::string("module"),
              type_name_of(value)));
        }
        m.*member = typed;
        m.replace_module(key, typed);
      });
}

// A tensor argument that may be None.
Tensor opt(const std::optional<Tensor>& t) { return t.value_or(Tensor()); }

void bind_resnet(py::module_& mm) {
  Model<models::ResNet> resnet(mm, "ResNet");
  child_property(resnet, "conv1", &models::ResNet::conv1);
  child_property(resnet, "bn1", &models::ResNet::bn1);
  child_property(resnet, "relu", &models::ResNet::relu);
  child_property(resnet, "maxpool", &models::ResNet::maxpool);
  child_property(resnet, "layer1", &models::ResNet::layer1);
  child_property(resnet, "layer2", &models::ResNet::layer2);
  child_property(resnet, "layer3", &models::ResNet::layer3);
  child_property(resnet, "layer4", &models::ResNet::layer4);
  child_property(resnet, "avgpool", &models::ResNet::avgpool);
  child_property(resnet, "fc", &models::ResNet::fc);

  // torchvision's resnet18(num_classes=..., zero_init_residual=...).
  auto factory = [&mm](const char* name, models::ResNetBlock block, std::vector<int64_t> layers) {
    mm.def(
        name,
        [block, layers](int64_t num_classes, bool zero_init_residual) {
          return std::make_shared<models::ResNet>(
              models::ResNetConfig{block, layers, num_classes, zero_init_residual});
        },
        "num_classes"_a = 1000, "zero_init_residual"_a = false);
  };
  factory("resnet18", models::ResNetBlock::Basic, {2, 2, 2, 2});
  factory("resnet34", models::ResNetBlock::Basic, {3, 4, 6, 3});
  factory("resnet50", models::ResNetBlock::Bottleneck, {3, 4, 6, 3});
}

void bind_bert(py::module_& mm) {
  // Hugging Face's output object, reduced to what kiln's BertModel returns: attributes, and
  // indexing / unpacking as a tuple (o[0] is last_hidden_state).
  py::class_<models::BertModelOutput>(mm, "BertModelOutput")
      .def_property_readonly("last_hidden_state",
                             [](const models::BertModelOutput& o) { return o.last_hidden_state; })
      .def_property_readonly("pooler_output",
                             [](const models::BertModelOutput& o) -> py::object {
                               if (!o.pooler_output.defined()) return py::none();
                               return py::cast(o.pooler_output);
                             })
      .def("to_tuple",
           [](py::object self) {
             py::list items;
             items.append(self.attr("last_hidden_state"));
             if (!self.attr("pooler_output").is_none()) items.append(self.attr("pooler_output"));
             return py::tuple(items);
           })
      .def("__getitem__",
           [](py::object self, int64_t i) -> py::object {
             return self.attr("to_tuple")()[py::int_(i)];
           })
      .def("__len__", [](py::object self) { return py::len(self.attr("to_tuple")()); })
      .def("__iter__", [](py::object self) { return py::iter(self.attr("to_tuple")()); });

  Model<models::BertModel> bert(mm, "BertModel");
  bert.def(
      "forward",
      [](models::BertModel& m, const Tensor& input_ids, std::optional<Tensor> attention_mask,
         std::optional<Tensor> token_type_ids) {
        PythonCallSite site;
        return m.forward(input_ids, opt(attention_mask), opt(token_type_ids));
      },
      "input_ids"_a, "attention_mask"_a = py::none(), "token_type_ids"_a = py::none());
  child_property(bert, "embeddings", &models::BertModel::embeddings);
  child_property(bert, "encoder", &models::BertModel::encoder);
  child_property(bert, "pooler", &models::BertModel::pooler);

  Model<models::BertForSequenceClassification> classifier(mm, "BertForSequenceClassification");
  classifier
      .def(
          "forward",
          [](models::BertForSequenceClassification& m, const Tensor& input_ids,
             std::optional<Tensor> attention_mask, std::optional<Tensor> token_type_ids) {
            PythonCallSite site;
            return m.forward(input_ids, opt(attention_mask), opt(token_type_ids));
          },
          "input_ids"_a, "attention_mask"_a = py::none(), "token_type_ids"_a = py::none())
      .def(
          "loss",
          [](const models::BertForSequenceClassification& m, const Tensor& logits,
             const Tensor& labels) {
            PythonCallSite site;
            return m.loss(logits, labels);
          },
          "logits"_a, "labels"_a)
      .def_readonly("num_labels", &models::BertForSequenceClassification::num_labels);
  child_property(classifier, "bert", &models::BertForSequenceClassification::bert);
  child_property(classifier, "dropout", &models::BertForSequenceClassification::dropout);
  child_property(classifier, "classifier", &models::BertForSequenceClassification::classifier);

  // Hugging Face's BertConfig fields and defaults.
  const models::BertConfig d;
  auto config = [](int64_t vocab_size, int64_t hidden_size, int64_t num_hidden_layers,
                   int64_t num_attention_heads, int64_t intermediate_size, std::string hidden_act,
                   double hidden_dropout_prob, double attention_probs_dropout_prob,
                   int64_t max_position_embeddings, int64_t type_vocab_size,
                   double initializer_range, double layer_norm_eps, int64_t pad_token_id,
                   bool add_pooling_layer, int64_t num_labels) {
    return models::BertConfig{vocab_size,
                              hidden_size,
                              num_hidden_layers,
                              num_attention_heads,
                              intermediate_size,
                              std::move(hidden_act),
                              hidden_dropout_prob,
                              attention_probs_dropout_prob,
                              max_position_embeddings,
                              type_vocab_size,
                              initializer_range,
                              layer_norm_eps,
                              pad_token_id,
                              add_pooling_layer,
                              num_labels};
  };
  auto def_factory = [&](const char* name, auto make) {
    mm.def(
        name,
        [config, make](int64_t vocab_size, int64_t hidden_size, int64_t num_hidden_layers,
                       int64_t num_attention_heads, int64_t intermediate_size,
                       std::string hidden_act, double hidden_dropout_prob,
                       double attention_probs_dropout_prob, int64_t max_position_embeddings,
                       int64_t type_vocab_size, double initializer_range, double layer_norm_eps,
                       int64_t pad_token_id, bool add_pooling_layer, int64_t num_labels) {
          return make(config(vocab_size, hidden_size, num_hidden_layers, num_attention_heads,
                             intermediate_size, std::move(hidden_act), hidden_dropout_prob,
                             attention_probs_dropout_prob, max_position_embeddings, type_vocab_size,
                             initializer_range, layer_norm_eps, pad_token_id, add_pooling_layer,
                             num_labels));
        },
        py::kw_only(), "vocab_size"_a = d.vocab_size, "hidden_size"_a = d.hidden_size,
        "num_hidden_layers"_a = d.num_hidden_layers,
        "num_attention_heads"_a = d.num_attention_heads,
        "intermediate_size"_a = d.intermediate_size, "hidden_act"_a = d.hidden_act,
        "hidden_dropout_prob"_a = d.hidden_dropout_prob,
        "attention_probs_dropout_prob"_a = d.attention_probs_dropout_prob,
        "max_position_embeddings"_a = d.max_position_embeddings,
        "type_vocab_size"_a = d.type_vocab_size, "initializer_range"_a = d.initializer_range,
        "layer_norm_eps"_a = d.layer_norm_eps, "pad_token_id"_a = d.pad_token_id,
        "add_pooling_layer"_a = d.add_pooling_layer, "num_labels"_a = d.num_labels);
  };
  def_factory("bert", [](const models::BertConfig& c) { return models::bert(c); });
  def_factory("bert_for_sequence_classification", [](const models::BertConfig& c) {
    return models::bert_for_sequence_classification(c);
  });
}

void bind_gpt2(py::module_& mm) {
  Model<models::GPT2Model> trunk(mm, "GPT2Model");
  trunk.def(
      "forward",
      [](models::GPT2Model& m, const Tensor& input_ids, std::optional<Tensor> attention_mask) {
        PythonCallSite site;
        return m.forward(input_ids, opt(attention_mask));
      },
      "input_ids"_a, "attention_mask"_a = py::none());
  child_property(trunk, "wte", &models::GPT2Model::wte);
  child_property(trunk, "wpe", &models::GPT2Model::wpe);
  child_property(trunk, "drop", &models::GPT2Model::drop);
  child_property(trunk, "h", &models::GPT2Model::h);
  child_property(trunk, "ln_f", &models::GPT2Model::ln_f);

  Model<models::GPT2LMHeadModel> lm(mm, "GPT2LMHeadModel");
  lm.def(
      "forward",
      [](models::GPT2LMHeadModel& m, const Tensor& input_ids,
         std::optional<Tensor> attention_mask) {
        PythonCallSite site;
        return m.forward(input_ids, opt(attention_mask));
      },
      "input_ids"_a, "attention_mask"_a = py::none());
  child_property(lm, "transformer", &models::GPT2LMHeadModel::transformer);
  child_property(lm, "lm_head", &models::GPT2LMHeadModel::lm_head);

  // Hugging Face's GPT2Config fields and defaults.
  const models::GPT2Config d;
  mm.def(
      "gpt2",
      [](int64_t vocab_size, int64_t n_positions, int64_t n_embd, int64_t n_layer, int64_t n_head,
         std::optional<int64_t> n_inner, double resid_pdrop, double embd_pdrop, double attn_pdrop,
         double layer_norm_epsilon, double initializer_range) {
        return models::gpt2(models::GPT2Config{vocab_size, n_positions, n_embd, n_layer, n_head,
                                               n_inner, resid_pdrop, embd_pdrop, attn_pdrop,
                                               layer_norm_epsilon, initializer_range});
      },
      py::kw_only(), "vocab_size"_a = d.vocab_size, "n_positions"_a = d.n_positions,
      "n_embd"_a = d.n_embd, "n_layer"_a = d.n_layer, "n_head"_a = d.n_head,
      "n_inner"_a = py::none(), "resid_pdrop"_a = d.resid_pdrop, "embd_pdrop"_a = d.embd_pdrop,
      "attn_pdrop"_a = d.attn_pdrop, "layer_norm_epsilon"_a = d.layer_norm_epsilon,
      "initializer_range"_a = d.initializer_range);
}

void bind_vit_and_mlp(py::module_& mm) {
  Model<models::VisionTransformer> vit(mm, "VisionTransformer");
  child_property(vit, "conv_proj", &models::VisionTransformer::conv_proj);
  child_property(vit, "encoder", &models::VisionTransformer::encoder);
  child_property(vit, "heads", &models::VisionTransformer::heads);

  // torchvision's VisionTransformer arguments and defaults (ViT-B/16).
  const models::ViTConfig d;
  mm.def(
      "vision_transformer",
      [](int64_t image_size, int64_t patch_size, int64_t num_layers, int64_t num_heads,
         int64_t hidden_dim, int64_t mlp_dim, double dropout, double attention_dropout,
         int64_t num_classes) {
        return models::vision_transformer(models::ViTConfig{image_size, patch_size, num_layers,
                                                            num_heads, hidden_dim, mlp_dim, dropout,
                                                            attention_dropout, num_classes});
      },
      py::kw_only(), "image_size"_a = d.image_size, "patch_size"_a = d.patch_size,
      "num_layers"_a = d.num_layers, "num_heads"_a = d.num_heads, "hidden_dim"_a = d.hidden_dim,
      "mlp_dim"_a = d.mlp_dim, "dropout"_a = d.dropout, "attention_dropout"_a = d.attention_dropout,
      "num_classes"_a = d.num_classes);
  mm.def("vit_b_16", &models::vit_b_16, "num_classes"_a = 1000);

  const models::MLPConfig m;
  mm.def(
      "mlp",
      [](int64_t in_features, std::vector<int64_t> hidden_features, int64_t out_features,
         std::string gelu_approximate, bool bias) {
        return models::mlp(models::MLPConfig{in_features, std::move(hidden_features), out_features,
                                             std::move(gelu_approximate), bias});
      },
      py::kw_only(), "in_features"_a = m.in_features, "hidden_features"_a = m.hidden_features,
      "out_features"_a = m.out_features, "gelu_approximate"_a = m.gelu_approximate,
      "bias"_a = m.bias);
}

}  // namespace

void bind_models(py::module_& m) {
  py::module_ mm = m.def_submodule("models", "kiln::models: the reference models");
  bind_resnet(mm);
  bind_bert(mm);
  bind_gpt2(mm);
  bind_vit_and_mlp(mm);
}

}  // namespace kiln::python
