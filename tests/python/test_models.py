"""kiln.models from Python: each factory's model runs, has torchvision's / Hugging Face's
parameter names, and computes what the original computes with the same weights (small configs);
kiln.load_safetensors / save_safetensors round trips, also with files the safetensors package
writes."""
import os

import numpy as np
import pytest

import kiln
import kiln.nn as nn

torch = pytest.importorskip("torch")


def k(t):
    return kiln.tensor(t.detach().numpy())


def close(kv, tv, atol=1e-4, rtol=1e-4):
    np.testing.assert_allclose(kv.detach().numpy(), tv.detach().numpy(), atol=atol, rtol=rtol)


def load_from_torch(kmodel, tmodel):
    """torch's state dict into the kiln model by name: the names must be the same."""
    tstate = tmodel.state_dict()
    assert list(kmodel.state_dict()) == list(tstate)
    kmodel.load_state_dict({name: k(v) for name, v in tstate.items()})


def perturb(model):
    # Move parameters off their structured init (ones, zeros) so that every one matters.
    gen = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * 0.05)


def test_mlp():
    model = kiln.models.mlp(in_features=6, hidden_features=[8, 5], out_features=3)
    assert isinstance(model, nn.Sequential)
    assert [n for n, _ in model.named_parameters()] == [
        "0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"]
    ref = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.GELU(), torch.nn.Linear(8, 5),
                              torch.nn.GELU(), torch.nn.Linear(5, 3))
    load_from_torch(model, ref)
    x = torch.randn(4, 6)
    close(model(k(x)), ref(x), atol=1e-5)


def test_resnet18_matches_torchvision():
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(1)
    ref = torchvision.models.resnet18(num_classes=10)
    perturb(ref)
    model = kiln.models.resnet18(num_classes=10)
    assert isinstance(model, kiln.models.ResNet) and isinstance(model, nn.Module)
    assert [n for n, _ in model.named_parameters()] == [n for n, _ in ref.named_parameters()]
    load_from_torch(model, ref)
    # 64x64 so that training-mode batch norm sees 8 values per channel in layer4 (2 would make
    # the batch statistics, and so the comparison, ill-conditioned).
    x = torch.randn(2, 3, 64, 64)
    ref.eval(), model.eval()
    with torch.no_grad():
        expected = ref(x)
    close(model(k(x)), expected)
    # Training mode: batch statistics, running statistics move, gradients flow.
    ref.train(), model.train()
    tout, kout = ref(x), model(k(x))
    close(kout, tout)
    tout.sum().backward()
    kout.sum().backward()
    close(model.fc.weight.grad, ref.fc.weight.grad)
    close(model.conv1.weight.grad, ref.conv1.weight.grad, atol=2e-4, rtol=1e-3)
    close(model.layer4[1].bn2.running_mean, ref.layer4[1].bn2.running_mean)
    # Fine-tuning's head swap reaches the C++ forward.
    model.fc = nn.Linear(512, 4)
    assert model(k(x)).shape == (2, 4) and model.fc.out_features == 4
    assert list(model.state_dict())[-2:] == ["fc.weight", "fc.bias"]
    assert model.fc.weight is dict(model.named_parameters())["fc.weight"]


def test_resnet_variants_build():
    assert kiln.models.resnet50(num_classes=3).layer1[0].conv3.out_channels == 256
    r = kiln.models.resnet18(num_classes=2, zero_init_residual=True)
    assert r.layer1[0].bn2.weight.abs().sum().item() == 0
    with pytest.raises(NotImplementedError, match="downloads no weights"):
        kiln.models.resnet18(weights="IMAGENET1K_V1")


def bert_config():
    return dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=64, max_position_embeddings=16)


def bert_inputs():
    gen = torch.Generator().manual_seed(3)
    input_ids = torch.randint(0, 100, (2, 8), generator=gen)
    token_type_ids = torch.randint(0, 2, (2, 8), generator=gen)
    mask = torch.ones(2, 8, dtype=torch.int64)
    mask[1, 5:] = 0
    return input_ids, token_type_ids, mask


def test_bert_matches_transformers():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(2)
    ref = transformers.BertModel(transformers.BertConfig(**bert_config())).eval()
    perturb(ref)
    model = kiln.models.bert(**bert_config()).eval()
    assert isinstance(model, kiln.models.BertModel)
    load_from_torch(model, ref)
    ids, types, mask = bert_inputs()
    out = model(k(ids), attention_mask=k(mask), token_type_ids=k(types))
    with torch.no_grad():
        expected = ref(input_ids=ids, token_type_ids=types, attention_mask=mask)
    close(out.last_hidden_state, expected.last_hidden_state)
    close(out.pooler_output, expected.pooler_output)
    hidden, pooled = out  # unpacks like Hugging Face's output
    close(out[0], expected[0])
    assert hidden.shape == (2, 8, 32) and pooled.shape == (2, 32)
    plain = model(k(ids))  # input_ids alone: the C++ forward's defaults
    assert plain.last_hidden_state.shape == (2, 8, 32)


def test_bert_for_sequence_classification_matches_transformers():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(4)
    config = transformers.BertConfig(num_labels=3, **bert_config())
    ref = transformers.BertForSequenceClassification(config).eval()
    perturb(ref)
    model = kiln.models.bert_for_sequence_classification(num_labels=3, **bert_config()).eval()
    load_from_torch(model, ref)
    ids, types, mask = bert_inputs()
    labels = torch.tensor([2, 0])
    expected = ref(input_ids=ids, token_type_ids=types, attention_mask=mask, labels=labels)
    logits = model(k(ids), k(mask), k(types))
    loss = model.loss(logits, k(labels))
    close(logits, expected.logits)
    close(loss, expected.loss)
    expected.loss.backward()
    loss.backward()
    close(model.classifier.weight.grad, ref.classifier.weight.grad)
    close(model.get_parameter("bert.encoder.layer.0.attention.self.key.weight").grad,
          ref.bert.encoder.layer[0].attention.self.key.weight.grad, atol=2e-4)


def test_gpt2_matches_transformers():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(5)
    config = dict(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=16)
    ref = transformers.GPT2LMHeadModel(transformers.GPT2Config(**config)).eval()
    perturb(ref)
    model = kiln.models.gpt2(**config).eval()
    assert isinstance(model, kiln.models.GPT2LMHeadModel)
    # lm_head.weight is wte.weight (tied): one parameter, listed once, under both state names.
    assert "lm_head.weight" not in dict(model.named_parameters())
    assert model.lm_head.weight is model.transformer.wte.weight
    load_from_torch(model, ref)
    ids = torch.randint(0, 100, (2, 10), generator=torch.Generator().manual_seed(6))
    mask = torch.ones(2, 10, dtype=torch.int64)
    with torch.no_grad():
        expected = ref(input_ids=ids).logits
        expected_masked = ref(input_ids=ids, attention_mask=mask).logits
    close(model(k(ids)), expected)
    close(model(k(ids), attention_mask=k(mask)), expected_masked)


def test_vision_transformer_matches_torchvision():
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(7)
    config = dict(image_size=32, patch_size=16, num_layers=2, num_heads=4, hidden_dim=32,
                  mlp_dim=64, num_classes=10)
    ref = torchvision.models.VisionTransformer(**config).eval()
    perturb(ref)
    model = kiln.models.vision_transformer(**config).eval()
    load_from_torch(model, ref)
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        expected = ref(x)
    close(model(k(x)), expected)
    assert kiln.models.vit_b_16(num_classes=5).heads.head.out_features == 5


def test_safetensors_round_trips(tmp_path):
    torch.manual_seed(0)
    model = kiln.models.mlp(in_features=4, hidden_features=[6], out_features=2)
    path = os.path.join(tmp_path, "model.safetensors")
    kiln.save_safetensors(model, path, metadata={"format": "pt"})
    fresh = kiln.models.mlp(in_features=4, hidden_features=[6], out_features=2)
    result = kiln.load_safetensors(fresh, path)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (name, a), (_, b) in zip(model.state_dict().items(), fresh.state_dict().items()):
        assert a.tolist() == b.tolist(), name
    tensors = kiln.load_safetensors(path)
    assert sorted(tensors) == sorted(model.state_dict())
    from kiln._serialize import load_safetensors_metadata
    assert load_safetensors_metadata(path) == {"format": "pt"}
    # A dict of tensors, and the files of the Python safetensors package, by name.
    dict_path = os.path.join(tmp_path, "dict.safetensors")
    kiln.save_safetensors({"a": kiln.arange(6).reshape(2, 3), "b": kiln.ones(2)}, dict_path)
    loaded = kiln.load_safetensors(dict_path)
    assert loaded["a"].tolist() == [[0, 1, 2], [3, 4, 5]] and loaded["b"].dtype is kiln.float32
    st = pytest.importorskip("safetensors.torch")
    ref = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.GELU(), torch.nn.Linear(6, 2))
    torch_path = os.path.join(tmp_path, "torch.safetensors")
    st.save_file(ref.state_dict(), torch_path)
    kiln.load_safetensors(fresh, torch_path)
    x = torch.randn(3, 4)
    close(fresh(k(x)), ref(x), atol=1e-5)
    back = st.load_file(path)
    for name, value in model.state_dict().items():
        close(value, back[name], atol=0)
    with pytest.raises(kiln.KilnError, match="size mismatch"):
        kiln.load_safetensors(kiln.models.mlp(in_features=5, hidden_features=[6],
                                              out_features=2), path)
    longer = kiln.models.mlp(in_features=4, hidden_features=[6], out_features=2)
    longer.append(nn.Linear(2, 2))
    with pytest.raises(kiln.KilnError, match='Missing key.*"3.weight"'):
        kiln.load_safetensors(longer, path)
    result = kiln.load_safetensors(longer, path, strict=False)
    assert result.missing_keys == ["3.weight", "3.bias"] and result.unexpected_keys == []
