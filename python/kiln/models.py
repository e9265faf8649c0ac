"""kiln.models: the reference models (kiln::models), with torchvision's and Hugging Face's module
structure and parameter names, so that their state dicts load by name:

    model = kiln.models.resnet18(num_classes=10)
    bert = kiln.models.bert(vocab_size=100, hidden_size=64, num_hidden_layers=2,
                            num_attention_heads=4, intermediate_size=128)
    out = bert(input_ids, attention_mask=mask)        # out.last_hidden_state, out.pooler_output
    logits = kiln.models.gpt2(n_layer=2, n_embd=64, n_head=4)(input_ids)

Each returns a kiln.nn.Module; weights start as the originals' initializations (random, nothing
is downloaded): load trained ones with kiln.load_safetensors(model, path).
"""
from . import _C

_models = _C.models

ResNet = _models.ResNet
BertModel = _models.BertModel
BertModelOutput = _models.BertModelOutput
BertForSequenceClassification = _models.BertForSequenceClassification
GPT2Model = _models.GPT2Model
GPT2LMHeadModel = _models.GPT2LMHeadModel
VisionTransformer = _models.VisionTransformer


def _no_weights(weights):
    if weights is not None:
        raise NotImplementedError("kiln.models downloads no weights: build the model with "
                                  "weights=None and load a checkpoint with "
                                  "kiln.load_safetensors(model, path)")


def mlp(*, in_features=1024, hidden_features=(1024, 1024), out_features=1024,
        gelu_approximate="none", bias=True):
    """Linear -> GELU -> ... -> Linear, as a kiln.nn.Sequential (parameters 0.weight, ...)."""
    return _models.mlp(in_features=in_features, hidden_features=list(hidden_features),
                       out_features=out_features, gelu_approximate=gelu_approximate, bias=bias)


def resnet18(*, weights=None, progress=True, num_classes=1000, zero_init_residual=False):
    _no_weights(weights)
    return _models.resnet18(num_classes, zero_init_residual)


def resnet34(*, weights=None, progress=True, num_classes=1000, zero_init_residual=False):
    _no_weights(weights)
    return _models.resnet34(num_classes, zero_init_residual)


def resnet50(*, weights=None, progress=True, num_classes=1000, zero_init_residual=False):
    _no_weights(weights)
    return _models.resnet50(num_classes, zero_init_residual)


def bert(**config):
    """Hugging Face's BertModel; keyword arguments are BertConfig's fields (vocab_size,
    hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, hidden_act,
    hidden_dropout_prob, attention_probs_dropout_prob, max_position_embeddings,
    type_vocab_size, initializer_range, layer_norm_eps, pad_token_id, add_pooling_layer)."""
    return _models.bert(**config)


def bert_for_sequence_classification(**config):
    """Hugging Face's BertForSequenceClassification (BertConfig's fields, num_labels too)."""
    return _models.bert_for_sequence_classification(**config)


def gpt2(**config):
    """Hugging Face's GPT2LMHeadModel; keyword arguments are GPT2Config's fields (vocab_size,
    n_positions, n_embd, n_layer, n_head, n_inner, resid_pdrop, embd_pdrop, attn_pdrop,
    layer_norm_epsilon, initializer_range)."""
    return _models.gpt2(**config)


def vision_transformer(**config):
    """torchvision's VisionTransformer (image_size, patch_size, num_layers, num_heads,
    hidden_dim, mlp_dim, dropout, attention_dropout, num_classes)."""
    return _models.vision_transformer(**config)


def vit_b_16(*, weights=None, progress=True, num_classes=1000):
    _no_weights(weights)
    return _models.vit_b_16(num_classes)
