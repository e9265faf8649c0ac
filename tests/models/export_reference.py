"""Exports reference data for tests/models/test_models_reference.cpp from independent
implementations: torchvision's ResNet-18 and VisionTransformer, Hugging Face's BertModel,
BertForSequenceClassification and GPT2LMHeadModel, and a torch.nn.Sequential MLP.

Each model is built small, with seeded random weights (no download), its parameters perturbed
away from their structured initial values (ones, zeros) so that every one of them matters. For
each model the script writes <out>/<model>/model.safetensors (the format kiln checkpoints load
from), with float tensors as float32 and integer ones as int64, under these names:
"state.<state_dict key>" (the weights), "input.<name>", "output.<name>", "weight.<name>"
(the fixed random tensor R each output is multiplied by in the scalar loss sum(output * R)),
"grad.<parameter name>" (the loss's gradient with respect to that parameter), and
"after.<buffer name>" (buffers after a training-mode forward).

Run: python3 tests/models/export_reference.py <out_dir>
"""
import os
import sys
import warnings

import torch

warnings.filterwarnings("ignore")


class Writer:
    def __init__(self, out_dir, model_name):
        self.dir = os.path.join(out_dir, model_name)
        os.makedirs(self.dir, exist_ok=True)
        self.tensors = {}

    def add(self, name, tensor):
        t = tensor.detach().contiguous().cpu()
        t = t.to(torch.float32) if t.dtype.is_floating_point else t.to(torch.int64)
        self.tensors[name] = t.clone()

    def add_state(self, model):
        for key, value in model.state_dict().items():
            self.add("state." + key, value)

    def close(self):
        from safetensors.torch import save_file
        # Written under a temporary name and renamed: a present file is a complete one.
        path = os.path.join(self.dir, "model.safetensors")
        save_file(self.tensors, path + ".tmp")
        os.replace(path + ".tmp", path)


def perturb(model, scale=0.05):
    """Moves every parameter off its structured init (LayerNorm ones, zero biases, zero heads)."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * scale)


def loss_of(outputs, w):
    """sum(output * R) over the named outputs, each R fixed and random; records R and outputs."""
    loss = 0
    for name, out in outputs.items():
        r = torch.randn(out.shape, generator=torch.Generator().manual_seed(len(name)))
        w.add("weight." + name, r)
        w.add("output." + name, out)
        loss = loss + (out * r).sum()
    return loss


def add_grads(model, names, w):
    params = dict(model.named_parameters(remove_duplicate=False))
    for n in names:
        w.add("grad." + n, params[n].grad)


def export_mlp(out):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 48), torch.nn.GELU(), torch.nn.Linear(48, 40),
                                torch.nn.GELU(), torch.nn.Linear(40, 16))
    w = Writer(out, "mlp")
    w.add_state(model)
    x = torch.randn(4, 32)
    w.add("input.x", x)
    loss = loss_of({"y": model(x)}, w)
    loss.backward()
    add_grads(model, [n for n, _ in model.named_parameters()], w)
    w.close()


def export_resnet18(out):
    import torchvision
    torch.manual_seed(1)
    model = torchvision.models.resnet18(num_classes=10)
    perturb(model)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn_like(m.running_mean) * 0.1)
                m.running_var.uniform_(0.5, 1.5)
    w = Writer(out, "resnet18")
    w.add_state(model)
    x = torch.randn(2, 3, 64, 64)
    w.add("input.x", x)
    model.eval()
    with torch.no_grad():
        w.add("output.eval", model(x))
    # Training mode: batch statistics normalize and the running ones move.
    model.train()
    loss = loss_of({"train": model(x)}, w)
    loss.backward()
    add_grads(model, ["conv1.weight", "bn1.weight", "layer1.0.conv1.weight", "layer2.0.downsample.0.weight",
                      "layer2.0.downsample.1.bias", "layer4.1.bn2.weight", "fc.weight", "fc.bias"], w)
    for name in ["bn1.running_mean", "bn1.running_var", "layer3.0.downsample.1.running_var",
                 "layer4.1.bn2.running_mean"]:
        w.add("after." + name, model.get_buffer(name))
    w.close()


def bert_config():
    from transformers import BertConfig
    return BertConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=128, max_position_embeddings=32)


def bert_inputs(w):
    g = torch.Generator().manual_seed(3)
    input_ids = torch.randint(0, 100, (2, 8), generator=g)
    token_type_ids = torch.randint(0, 2, (2, 8), generator=g)
    attention_mask = torch.ones(2, 8, dtype=torch.int64)
    attention_mask[1, 5:] = 0  # the second sequence is padded
    w.add("input.input_ids", input_ids)
    w.add("input.token_type_ids", token_type_ids)
    w.add("input.attention_mask", attention_mask)
    return input_ids, token_type_ids, attention_mask


def export_bert(out):
    from transformers import BertModel
    torch.manual_seed(2)
    model = BertModel(bert_config())
    perturb(model)
    model.eval()
    w = Writer(out, "bert")
    w.add_state(model)
    input_ids, token_type_ids, attention_mask = bert_inputs(w)
    o = model(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask)
    loss = loss_of({"last_hidden_state": o.last_hidden_state, "pooler_output": o.pooler_output}, w)
    loss.backward()
    add_grads(model, ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
                      "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.bias",
                      "encoder.layer.0.attention.self.query.weight",
                      "encoder.layer.0.attention.self.value.bias",
                      "encoder.layer.1.intermediate.dense.weight",
                      "encoder.layer.1.output.LayerNorm.weight", "pooler.dense.weight"], w)
    w.close()


def export_bert_classifier(out):
    from transformers import BertForSequenceClassification
    torch.manual_seed(4)
    config = bert_config()
    config.num_labels = 2
    model = BertForSequenceClassification(config)
    perturb(model)
    model.eval()
    w = Writer(out, "bert_classifier")
    w.add_state(model)
    input_ids, token_type_ids, attention_mask = bert_inputs(w)
    labels = torch.tensor([1, 0])
    w.add("input.labels", labels)
    o = model(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask,
              labels=labels)
    w.add("output.logits", o.logits)
    w.add("output.loss", o.loss)
    o.loss.backward()
    add_grads(model, ["classifier.weight", "classifier.bias", "bert.pooler.dense.bias",
                      "bert.encoder.layer.0.attention.self.key.weight",
                      "bert.embeddings.word_embeddings.weight"], w)
    w.close()


def export_gpt2(out):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(5)
    config = GPT2Config(vocab_size=100, n_embd=64, n_layer=2, n_head=4, n_positions=32,
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config)
    perturb(model)
    model.eval()
    w = Writer(out, "gpt2")
    w.add_state(model)
    input_ids = torch.randint(0, 100, (2, 10), generator=torch.Generator().manual_seed(6))
    w.add("input.input_ids", input_ids)
    loss = loss_of({"logits": model(input_ids=input_ids).logits}, w)
    loss.backward()
    add_grads(model, ["transformer.wte.weight", "transformer.wpe.weight",
                      "transformer.h.0.ln_1.weight", "transformer.h.0.attn.c_attn.weight",
                      "transformer.h.0.attn.c_proj.bias", "transformer.h.1.mlp.c_fc.weight",
                      "transformer.h.1.mlp.c_proj.weight", "transformer.ln_f.bias"], w)
    w.close()


def export_vit(out):
    import torchvision
    torch.manual_seed(7)
    model = torchvision.models.VisionTransformer(image_size=32, patch_size=16, num_layers=2,
                                                 num_heads=4, hidden_dim=64, mlp_dim=128,
                                                 num_classes=10)
    perturb(model)
    model.eval()
    w = Writer(out, "vit")
    w.add_state(model)
    x = torch.randn(2, 3, 32, 32)
    w.add("input.x", x)
    loss = loss_of({"logits": model(x)}, w)
    loss.backward()
    add_grads(model, ["class_token", "conv_proj.weight", "encoder.pos_embedding",
                      "encoder.layers.encoder_layer_0.self_attention.in_proj_weight",
                      "encoder.layers.encoder_layer_0.self_attention.out_proj.weight",
                      "encoder.layers.encoder_layer_1.mlp.0.weight",
                      "encoder.layers.encoder_layer_1.ln_2.bias", "encoder.ln.weight",
                      "heads.head.weight"], w)
    w.close()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: export_reference.py <out_dir>")
    out = sys.argv[1]
    torch.set_num_threads(1)
    export_mlp(out)
    try:
        import torchvision  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        print(f"export_reference: {e}; only the MLP reference is written", file=sys.stderr)
        return
    export_resnet18(out)
    export_bert(out)
    export_bert_classifier(out)
    export_gpt2(out)
    export_vit(out)


if __name__ == "__main__":
    main()
