"""kiln.nn from Python against PyTorch: the C++ layers (forward and gradients with the same
weights), losses and functional, Python subclasses of kiln.nn.Module (registration, names and
order, state dicts, modes, C++ callers reaching Python forwards), containers, Parameter, init
and gradient clipping."""
import gc

import numpy as np
import pytest

import kiln
import kiln.nn as nn
import kiln.nn.functional as F

torch = pytest.importorskip("torch")
tnn = torch.nn
TF = torch.nn.functional

pytestmark = [pytest.mark.filterwarnings("ignore:size_average and reduce args"),
              pytest.mark.filterwarnings("ignore:Using padding='same'")]


def k(t):
    """A torch tensor's values as a kiln tensor (same dtype)."""
    return kiln.tensor(t.detach().numpy())


def close(kv, tv, atol=1e-5, rtol=1e-5):
    a = kv.detach().numpy() if hasattr(kv, "numpy") else np.asarray(kv)
    b = tv.detach().numpy()
    assert a.shape == b.shape, f"shape {a.shape} != {b.shape}"
    np.testing.assert_allclose(a, b, atol=atol, rtol=rtol)


def copy_weights(kmod, tmod):
    """torch's state dict into the kiln module, by name (the names must match)."""
    result = kmod.load_state_dict({name: k(v) for name, v in tmod.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys


def outputs(out):
    """A module's output(s) as a flat list of tensors."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in outputs(o)]
    return [] if out is None else [out]


def check_layer(kmod, tmod, *inputs, grad=True, atol=1e-5):
    """Same weights, same inputs: forward outputs, input gradients and parameter gradients."""
    copy_weights(kmod, tmod)
    assert [n for n, _ in kmod.named_parameters()] == [n for n, _ in tmod.named_parameters()]
    kin = [k(x).requires_grad_(grad and x.is_floating_point()) for x in inputs]
    tin = [x.clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    kouts, touts = outputs(kmod(*kin)), outputs(tmod(*tin))
    assert len(kouts) == len(touts)
    for ko, to in zip(kouts, touts):
        close(ko, to, atol=atol)
    if not grad:
        return
    gen = torch.Generator().manual_seed(0)
    weights = [torch.randn(o.shape, generator=gen, dtype=o.dtype) for o in touts]
    sum(((o * w).sum() for o, w in zip(touts, weights)), torch.zeros(())).backward()
    sum(((o * k(w)).sum() for o, w in zip(kouts, weights)), kiln.zeros([])).backward()
    for ki, ti in zip(kin, tin):
        if ti.grad is not None:
            close(ki.grad, ti.grad, atol=atol)
    tgrads = dict(tmod.named_parameters())
    for name, p in kmod.named_parameters():
        if tgrads[name].grad is not None:
            close(p.grad, tgrads[name].grad, atol=atol)


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# ---- the C++ layers ----

LAYERS = [
    ("Linear", lambda m: m.Linear(5, 4), [(3, 5)]),
    ("Linear_nobias", lambda m: m.Linear(5, 4, bias=False), [(2, 3, 5)]),
    ("Bilinear", lambda m: m.Bilinear(3, 4, 2), [(5, 3), (5, 4)]),
    ("Conv1d", lambda m: m.Conv1d(3, 4, 3, stride=2, padding=1), [(2, 3, 9)]),
    ("Conv2d_same", lambda m: m.Conv2d(3, 4, 3, padding="same"), [(2, 3, 6, 5)]),
    ("Conv2d_groups", lambda m: m.Conv2d(4, 6, (3, 2), dilation=2, groups=2, bias=False),
     [(1, 4, 8, 7)]),
    ("Conv2d_reflect", lambda m: m.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
     [(1, 2, 5, 5)]),
    ("ConvTranspose1d", lambda m: m.ConvTranspose1d(3, 2, 3, stride=2), [(2, 3, 5)]),
    ("ConvTranspose2d",
     lambda m: m.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1), [(2, 3, 4, 4)]),
    ("BatchNorm1d", lambda m: m.BatchNorm1d(4), [(6, 4)]),
    ("BatchNorm2d", lambda m: m.BatchNorm2d(3, momentum=0.3), [(2, 3, 4, 4)]),
    ("LayerNorm", lambda m: m.LayerNorm([4, 5], eps=1e-3), [(2, 4, 5)]),
    ("GroupNorm", lambda m: m.GroupNorm(2, 4), [(3, 4, 5)]),
    ("RMSNorm", lambda m: m.RMSNorm(5), [(3, 5)]),
    ("ReLU", lambda m: m.ReLU(), [(3, 4)]),
    ("ReLU6", lambda m: m.ReLU6(), [(3, 4)]),
    ("GELU_tanh", lambda m: m.GELU(approximate="tanh"), [(3, 4)]),
    ("GELU", lambda m: m.GELU(), [(3, 4)]),
    ("SiLU", lambda m: m.SiLU(), [(3, 4)]),
    ("Mish", lambda m: m.Mish(), [(3, 4)]),
    ("Tanh", lambda m: m.Tanh(), [(3, 4)]),
    ("Sigmoid", lambda m: m.Sigmoid(), [(3, 4)]),
    ("Softplus", lambda m: m.Softplus(beta=2.0, threshold=1.0), [(3, 4)]),
    ("LeakyReLU", lambda m: m.LeakyReLU(0.2), [(3, 4)]),
    ("ELU", lambda m: m.ELU(alpha=0.5), [(3, 4)]),
    ("Hardtanh", lambda m: m.Hardtanh(-0.5, 0.5), [(3, 4)]),
    ("Hardswish", lambda m: m.Hardswish(), [(3, 4)]),
    ("Hardsigmoid", lambda m: m.Hardsigmoid(), [(3, 4)]),
    ("Softmax", lambda m: m.Softmax(dim=1), [(3, 4)]),
    ("LogSoftmax", lambda m: m.LogSoftmax(dim=-1), [(2, 3, 4)]),
    ("Identity", lambda m: m.Identity(7, foo="bar"), [(3, 4)]),
    ("Flatten", lambda m: m.Flatten(), [(2, 3, 4)]),
    ("Unflatten", lambda m: m.Unflatten(1, (2, 3)), [(4, 6)]),
    ("MaxPool2d", lambda m: m.MaxPool2d(3, 2, 1), [(2, 3, 7, 7)]),
    ("MaxPool2d_ceil", lambda m: m.MaxPool2d(2, ceil_mode=True), [(1, 2, 5, 5)]),
    ("AvgPool2d", lambda m: m.AvgPool2d(3, 2, 1, count_include_pad=False), [(2, 3, 7, 7)]),
    ("AdaptiveAvgPool2d", lambda m: m.AdaptiveAvgPool2d((2, 3)), [(2, 3, 7, 8)]),
    ("AdaptiveMaxPool2d", lambda m: m.AdaptiveMaxPool2d(2), [(2, 3, 5, 5)]),
    ("LSTM", lambda m: m.LSTM(3, 4, num_layers=2, batch_first=True), [(2, 5, 3)]),
    ("LSTM_bidirectional", lambda m: m.LSTM(3, 4, bidirectional=True), [(5, 2, 3)]),
    ("MultiheadAttention", lambda m: m.MultiheadAttention(8, 2, batch_first=True),
     [(2, 5, 8), (2, 6, 8), (2, 6, 8)]),
    ("TransformerEncoderLayer",
     lambda m: m.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                         activation="gelu", norm_first=True), [(6, 2, 8)]),
]


@pytest.mark.parametrize("name,make,shapes", LAYERS, ids=[layer[0] for layer in LAYERS])
def test_layer_matches_torch(name, make, shapes):
    torch.manual_seed(0)
    tmod, kmod = make(tnn), make(nn)
    assert repr(kmod) == repr(tmod)
    inputs = [randn(*s, seed=i) for i, s in enumerate(shapes)]
    check_layer(kmod, tmod, *inputs, atol=2e-5)
    for (name_k, bk), (name_t, bt) in zip(kmod.named_buffers(), tmod.named_buffers()):
        assert name_k == name_t  # BatchNorm's running statistics moved alike
        close(bk, bt)


def test_embedding_and_eval_mode_layers():
    torch.manual_seed(0)
    temb, kemb = tnn.Embedding(10, 3, padding_idx=1), nn.Embedding(10, 3, padding_idx=1)
    ids = torch.tensor([[1, 2, 3], [9, 1, 0]])
    check_layer(kemb, temb, ids)
    assert kemb.weight.grad[1].abs().sum().item() == 0.0  # the padding row gets no gradient
    tbn, kbn = tnn.BatchNorm2d(3), nn.BatchNorm2d(3)
    with torch.no_grad():
        tbn.running_mean.uniform_(-1, 1)
        tbn.running_var.uniform_(0.5, 2)
    tbn.eval(), kbn.eval()
    check_layer(kbn, tbn, randn(2, 3, 4, 4))
    drop = nn.Dropout(0.5).eval()
    x = kiln.randn(4, 5)
    assert drop(x).tolist() == x.tolist()
    pre = nn.Embedding.from_pretrained(kiln.eye(3))
    assert not pre.weight.requires_grad and pre(kiln.tensor([2])).tolist() == [[0.0, 0.0, 1.0]]


def test_layer_attributes_and_options():
    conv = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
    assert (conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride) == \
        (3, 8, (3, 3), (2, 2))
    assert conv.bias is None and conv.weight.shape == (8, 3, 3, 3)
    assert nn.Conv1d(2, 2, 3, padding="same").padding == "same"
    lin = nn.Linear(3, 2, dtype=kiln.float64)
    assert lin.weight.dtype is kiln.float64 and lin.in_features == 3
    pool = nn.MaxPool2d(2, return_indices=True)
    out, idx = pool(kiln.randn(1, 1, 4, 4))
    assert out.shape == (1, 1, 2, 2) and idx.dtype is kiln.int64
    assert nn.MaxPool2d(3).kernel_size == 3 and nn.MaxPool2d((3, 2)).kernel_size == (3, 2)
    bn = nn.BatchNorm1d(4)
    assert bn.num_batches_tracked.item() == 0 and bn.running_var.tolist() == [1.0] * 4
    assert nn.CrossEntropyLoss(reduction="sum").reduction == "sum"
    assert nn.KLDivLoss(reduction="batchmean").reduction == "batchmean"
    with pytest.raises(kiln.KilnError, match="in_features"):
        nn.Linear(3, 2)(kiln.randn(2, 4))
    with pytest.raises(ValueError, match="invalid padding string"):
        nn.Conv2d(1, 1, 3, padding="full")


def test_multihead_attention_masks_and_weights():
    torch.manual_seed(1)
    tmha, kmha = tnn.MultiheadAttention(8, 2), nn.MultiheadAttention(8, 2)
    copy_weights(kmha, tmha)
    q, kv = randn(4, 2, 8), randn(5, 2, 8, seed=1)
    pad = torch.tensor([[False, False, False, True, True], [False] * 5])
    mask = torch.triu(torch.ones(4, 5, dtype=torch.bool), diagonal=1)
    to, tw = tmha(q, kv, kv, key_padding_mask=pad, attn_mask=mask)
    ko, kw = kmha(k(q), k(kv), k(kv), key_padding_mask=k(pad), attn_mask=k(mask))
    close(ko, to)
    close(kw, tw)
    ko, kw = kmha(k(q), k(kv), k(kv), need_weights=False)
    assert kw is None


# ---- losses and functional ----

def _class_data():
    logits = randn(6, 4)
    target = torch.tensor([0, 3, 1, 1, 2, -100])
    weight = torch.tensor([1.0, 2.0, 0.5, 1.5])
    return logits, target, weight


LOSSES = [
    ("CrossEntropyLoss", lambda m, w: m.CrossEntropyLoss(), "class"),
    ("CrossEntropyLoss_opts",
     lambda m, w: m.CrossEntropyLoss(weight=w, reduction="sum", label_smoothing=0.1), "class"),
    ("NLLLoss", lambda m, w: m.NLLLoss(weight=w), "logprob"),
    ("MSELoss", lambda m, w: m.MSELoss(reduction="sum"), "real"),
    ("MSELoss_legacy", lambda m, w: m.MSELoss(size_average=False), "real"),
    ("L1Loss", lambda m, w: m.L1Loss(reduction="none"), "real"),
    ("SmoothL1Loss", lambda m, w: m.SmoothL1Loss(beta=0.5), "real"),
    ("HuberLoss", lambda m, w: m.HuberLoss(delta=0.5), "real"),
    ("BCELoss", lambda m, w: m.BCELoss(), "prob"),
    ("BCEWithLogitsLoss", lambda m, w: m.BCEWithLogitsLoss(pos_weight=w), "binary"),
    ("KLDivLoss", lambda m, w: m.KLDivLoss(reduction="batchmean"), "kl"),
]


def _loss_inputs(kind):
    logits, target, weight = _class_data()
    if kind == "class":
        return logits, target
    if kind == "logprob":
        return torch.log_softmax(logits, 1), target
    if kind == "prob":
        return torch.sigmoid(logits), torch.rand(6, 4, generator=torch.Generator().manual_seed(2))
    if kind == "binary":
        return logits, (randn(6, 4, seed=3) > 0).float()
    if kind == "kl":
        return torch.log_softmax(logits, 1), torch.softmax(randn(6, 4, seed=4), 1)
    return logits, randn(6, 4, seed=5)


@pytest.mark.parametrize("name,make,kind", LOSSES, ids=[loss[0] for loss in LOSSES])
def test_loss_module_matches_torch(name, make, kind):
    _, _, weight = _class_data()
    x, target = _loss_inputs(kind)
    tloss, kloss = make(tnn, weight), make(nn, k(weight))
    assert repr(kloss) == repr(tloss)
    check_layer(kloss, tloss, x, target)


def test_functional_losses_match_torch():
    logits, target, weight = _class_data()
    cases = [
        lambda f, x, t, w: f.cross_entropy(x, t.abs() % 4, weight=w, ignore_index=1,
                                           label_smoothing=0.2),
        lambda f, x, t, w: f.cross_entropy(x.T.reshape(1, 4, 6), t.reshape(1, 6),
                                           reduction="none"),
        lambda f, x, t, w: f.cross_entropy(x, f.softmax(x * 2, dim=1)),
        lambda f, x, t, w: f.nll_loss(f.log_softmax(x, dim=1), t, reduction="sum"),
        lambda f, x, t, w: f.mse_loss(x, x.flip(0), reduction="mean"),
        lambda f, x, t, w: f.l1_loss(x, x * 0.5, size_average=False),
        lambda f, x, t, w: f.smooth_l1_loss(x, x.flip(1), beta=0.25),
        lambda f, x, t, w: f.huber_loss(x, x.flip(1), reduction="sum", delta=2.0),
        lambda f, x, t, w: f.binary_cross_entropy(x.sigmoid(), (x > 0).float(), weight=w),
        lambda f, x, t, w: f.binary_cross_entropy_with_logits(x, (x > 0.5).float(),
                                                              pos_weight=w),
        lambda f, x, t, w: f.kl_div(f.log_softmax(x, 1), f.log_softmax(x.flip(0), 1),
                                    reduction="sum", log_target=True),
        lambda f, x, t, w: f.kl_div(f.log_softmax(x, 1), f.softmax(x.flip(0), 1),
                                    reduction="batchmean"),
    ]
    for case in cases:
        tx = logits.clone().requires_grad_(True)
        kx = k(logits).requires_grad_(True)
        tout = case(TF, tx, target, weight)
        kout = case(F, kx, k(target), k(weight))
        close(kout, tout)
        tout.sum().backward()
        kout.sum().backward()
        close(kx.grad, tx.grad)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(k(logits), k(logits), reduction="avg")


FUNCTIONAL = [
    lambda f, x: f.relu(x), lambda f, x: f.relu6(x * 4), lambda f, x: f.elu(x, alpha=0.3),
    lambda f, x: f.celu(x, alpha=0.7), lambda f, x: f.selu(x),
    lambda f, x: f.leaky_relu(x, 0.1), lambda f, x: f.hardtanh(x, -0.3, 0.4),
    lambda f, x: f.gelu(x), lambda f, x: f.gelu(x, approximate="tanh"), lambda f, x: f.silu(x),
    lambda f, x: f.mish(x), lambda f, x: f.softplus(x, beta=2, threshold=0.5),
    lambda f, x: f.hardswish(x * 3), lambda f, x: f.hardsigmoid(x * 3),
    lambda f, x: f.sigmoid(x), lambda f, x: f.tanh(x), lambda f, x: f.logsigmoid(x),
    lambda f, x: f.softsign(x), lambda f, x: f.tanhshrink(x),
    lambda f, x: f.threshold(x, 0.1, -2.0), lambda f, x: f.glu(x, dim=1),
    lambda f, x: f.softmax(x, dim=-1), lambda f, x: f.softmax(x, 1, dtype=torch.float64)
    if f is TF else f.softmax(x, 1, dtype=kiln.float64),
    lambda f, x: f.log_softmax(x, dim=0), lambda f, x: f.softmin(x, dim=1),
    lambda f, x: f.dropout(x, 0.3, training=False),
    lambda f, x: f.normalize(x, dim=1), lambda f, x: f.normalize(x, p=1.0, dim=0),
    lambda f, x: f.layer_norm(x, (4,), eps=1e-3),
    lambda f, x: f.group_norm(x.reshape(2, 4, 2), 2),
    lambda f, x: f.rms_norm(x, [4]),
    lambda f, x: f.batch_norm(x, x.mean(0).detach() * 0, x.var(0).detach() * 0 + 1,
                              training=True),
    lambda f, x: f.pad(x, (1, 2), value=0.5), lambda f, x: f.pad(x.reshape(1, 4, 4), (1, 1),
                                                                mode="reflect"),
    lambda f, x: f.cosine_similarity(x, x.flip(0), dim=1),
    lambda f, x: f.pairwise_distance(x, x.flip(0)),
    lambda f, x: f.max_pool2d(x.reshape(1, 1, 4, 4), 2),
    lambda f, x: f.max_pool2d(x.reshape(1, 2, 2, 4), (1, 2), stride=1, padding=(0, 1)),
    lambda f, x: f.avg_pool2d(x.reshape(1, 1, 4, 4), 3, stride=1, padding=1),
    lambda f, x: f.max_pool1d(x.reshape(2, 2, 4), 2),
    lambda f, x: f.avg_pool1d(x.reshape(2, 2, 4), 3, stride=1, padding=1),
    lambda f, x: f.adaptive_avg_pool2d(x.reshape(1, 2, 2, 4), (1, None)),
    lambda f, x: f.adaptive_avg_pool1d(x.reshape(1, 4, 4), 2),
    lambda f, x: f.adaptive_max_pool2d(x.reshape(1, 1, 4, 4), 2),
    lambda f, x: f.interpolate(x.reshape(1, 1, 4, 4), scale_factor=2),
    lambda f, x: f.interpolate(x.reshape(1, 1, 4, 4), size=(6, 5), mode="bilinear",
                               align_corners=False),
    lambda f, x: f.interpolate(x.reshape(1, 2, 8), size=5, mode="linear", align_corners=True),
    lambda f, x: f.pixel_shuffle(x.reshape(1, 4, 2, 2), 2),
    lambda f, x: f.scaled_dot_product_attention(x.reshape(1, 4, 4), x.reshape(1, 4, 4).flip(1),
                                                x.reshape(1, 4, 4), is_causal=True),
    lambda f, x: f.linear(x, x.flip(0)[:3], x[0, :3]),
    lambda f, x: f.bilinear(x, x.flip(0), x.reshape(1, 4, 4), x[0, :1]),
    lambda f, x: f.conv1d(x.reshape(1, 2, 8), x.reshape(4, 2, 2)[:, :, :2], stride=2),
    lambda f, x: f.conv2d(x.reshape(1, 1, 4, 4), x.reshape(4, 1, 2, 2), padding="same"),
    lambda f, x: f.conv_transpose2d(x.reshape(1, 4, 2, 2), x.reshape(4, 1, 2, 2), stride=2),
]


@pytest.mark.parametrize("case", range(len(FUNCTIONAL)))
def test_functional_matches_torch(case):
    fn = FUNCTIONAL[case]
    data = randn(4, 4)
    tx = data.clone().requires_grad_(True)
    kx = k(data).requires_grad_(True)
    touts, kouts = outputs(fn(TF, tx)), outputs(fn(F, kx))
    for ko, to in zip(kouts, touts):
        close(ko, to, atol=2e-5)
    if touts[0].is_floating_point():
        touts[0].sum().backward()
        kouts[0].sum().backward()
        close(kx.grad, tx.grad, atol=2e-5)


def test_functional_integer_inputs():
    ids = torch.tensor([[0, 2], [3, 1]])
    w = randn(5, 3)
    close(F.embedding(k(ids), k(w), padding_idx=-1), TF.embedding(ids, w, padding_idx=-1))
    close(F.one_hot(k(ids), 5), TF.one_hot(ids, 5))
    x = k(randn(3, 4))
    assert F.dropout(x, 0.5, training=True).shape == (3, 4)
    kept = F.dropout(kiln.ones(1000), 0.25)
    values = np.unique(kept.numpy())
    assert np.isclose(values, 0.0).sum() + np.isclose(values, 1 / 0.75).sum() == len(values)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)
    y = x.clone()
    assert F.relu(y, inplace=True) is y and y.min().item() >= 0


# ---- Python subclasses of kiln.nn.Module ----

def make_net(m, n_hidden=5):
    """The same structure in torch.nn and kiln.nn: nested submodules, a Parameter, a buffer."""

    class Block(m.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm = m.LayerNorm(dim)
            self.proj = m.Linear(dim, dim)
            self.gain = m.Parameter(torch.ones(dim) if m is tnn else kiln.ones(dim))

        def forward(self, x):
            return x + self.proj(self.norm(x)) * self.gain

    class Net(m.Module):
        def __init__(self):
            super().__init__()
            self.scale = m.Parameter(torch.full((3,), 0.5) if m is tnn else kiln.full([3], 0.5))
            self.inp = m.Linear(3, n_hidden)
            self.blocks = m.ModuleList([Block(n_hidden), Block(n_hidden)])
            self.act = m.GELU()
            self.head = m.Sequential(m.Linear(n_hidden, 4), m.Tanh())
            self.register_buffer("steps", torch.zeros(()) if m is tnn else kiln.zeros([]))
            self.label = "plain attribute"

        def forward(self, x):
            h = self.act(self.inp(x * self.scale))
            for block in self.blocks:
                h = block(h)
            return self.head(h)

    return Net()


def test_python_module_names_order_and_repr_match_torch():
    torch.manual_seed(0)
    tnet, knet = make_net(tnn), make_net(nn)
    assert [n for n, _ in knet.named_parameters()] == [n for n, _ in tnet.named_parameters()]
    assert list(knet.state_dict()) == list(tnet.state_dict())
    assert [n for n, _ in knet.named_modules()] == [n for n, _ in tnet.named_modules()]
    assert [n for n, _ in knet.named_children()] == [n for n, _ in tnet.named_children()]
    assert [n for n, _ in knet.named_buffers()] == ["steps"]
    assert repr(knet) == repr(tnet)
    assert knet.label == "plain attribute" and knet._get_name() == "Net"
    assert isinstance(knet.scale, nn.Parameter) and knet.scale is knet.scale
    assert knet.blocks[1].gain is dict(knet.named_parameters())["blocks.1.gain"]
    assert knet.get_submodule("blocks.0.proj") is knet.blocks[0].proj
    assert knet.get_parameter("head.0.bias").shape == (4,)
    assert "inp" in dir(knet) and "scale" in dir(knet)
    assert set(knet._parameters) == {"scale"} and set(knet._modules) == {
        "inp", "blocks", "act", "head"}


def test_python_module_forward_backward_matches_torch():
    torch.manual_seed(0)
    tnet, knet = make_net(tnn), make_net(nn)
    check_layer(knet, tnet, randn(2, 3), atol=2e-5)


def test_state_dict_round_trip_and_errors():
    torch.manual_seed(0)
    a, b = make_net(nn), make_net(nn)
    sd = a.state_dict()
    assert all(not v.requires_grad for v in sd.values())
    assert b.load_state_dict(sd).missing_keys == []
    assert repr(b.load_state_dict(sd)) == "<All keys matched successfully>"
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        assert pa.tolist() == pb.tolist(), name
    kept = b.state_dict(keep_vars=True)
    assert kept["scale"] is b.scale
    assert list(a.state_dict(prefix="net.")) == ["net." + n for n in sd]
    bad = dict(sd)
    bad["inp.weight"] = kiln.zeros(2, 2)
    with pytest.raises(kiln.KilnError, match="size mismatch for inp.weight"):
        b.load_state_dict(bad)
    partial = {n: v for n, v in sd.items() if n != "scale"}
    partial["extra"] = kiln.zeros(1)
    with pytest.raises(kiln.KilnError, match='Missing key.*"scale"'):
        b.load_state_dict(partial)
    result = b.load_state_dict(partial, strict=False)
    assert result.missing_keys == ["scale"] and result.unexpected_keys == ["extra"]


def test_modes_dtype_apply_and_grads():
    net = make_net(nn)
    assert net.training and net.blocks[0].norm.training
    assert net.eval() is net and not net.training and not net.head[0].training
    net.train()
    assert net.blocks[1].training
    net.head.training = False
    assert not net.head.training and net.head[0].training  # only its own flag
    seen, torch_seen = [], []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    make_net(tnn).apply(lambda m: torch_seen.append(type(m).__name__))
    assert seen == torch_seen
    net(kiln.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad.abs().sum().item() == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    scale = net.scale
    assert net.double() is net and net.scale.dtype is kiln.float64 and net.scale is scale
    assert net.steps.dtype is kiln.float64
    assert net(kiln.randn(2, 3, dtype=kiln.float64)).dtype is kiln.float64
    net.to(kiln.float32)
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    with pytest.raises(TypeError, match="floating point"):
        net.to(kiln.int64)


def test_attribute_registration_rules():
    class M(nn.Module):
        def __init__(self):
            self.early = 1  # plain attributes may come before __init__, as in PyTorch
            super().__init__()
            self.w = nn.Parameter(kiln.ones(2))
            self.register_buffer("b", kiln.zeros(2), persistent=False)
            self.register_parameter("none", None)

    m = M()
    assert m.early == 1 and m.none is None and list(m.state_dict()) == ["w"]
    with pytest.raises(TypeError, match="as parameter 'w'"):
        m.w = kiln.ones(2)
    m.w = None
    assert list(m.state_dict()) == []
    m.b = kiln.ones(3)
    assert m.b.tolist() == [1.0] * 3 and list(m.state_dict()) == []  # still non-persistent
    m.sub = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="child module 'sub'"):
        m.sub = 3
    with pytest.raises(AttributeError, match="has no attribute 'missing'"):
        m.missing
    with pytest.raises(AttributeError, match="before Module.__init__"):
        class Early(nn.Module):
            def __init__(self):
                self.fc = nn.Linear(1, 1)
        Early()
    lin = nn.Linear(2, 2)
    lin.weight = nn.Parameter(kiln.zeros(2, 2), requires_grad=False)  # a C++ member, replaced
    assert lin(kiln.ones(1, 2)).tolist() == [lin.bias.tolist()]
    assert not lin.weight.requires_grad
    block = kiln.models.resnet18(num_classes=2).layer1[0]
    with pytest.raises(kiln.KilnError, match='cannot replace the module "conv1"'):
        block.conv1 = nn.Conv2d(64, 64, 3, padding=1, bias=False)


def test_cpp_containers_call_python_forward():
    class Double(nn.Module):
        def forward(self, x):
            return x * 2

    class Tuple(nn.Module):
        def forward(self, x):
            return x, x

    seq = nn.Sequential(Double(), nn.ReLU(), Double())
    x = kiln.tensor([[-1.0, 2.0]])
    assert seq(x).tolist() == [[0.0, 8.0]]
    gc.collect()  # the Python objects live as long as the C++ container holds them
    assert seq(x).tolist() == [[0.0, 8.0]] and type(seq[0]) is Double
    assert repr(seq) == "Sequential(\n  (0): Double()\n  (1): ReLU()\n  (2): Double()\n)"
    with pytest.raises(TypeError, match="one tensor back"):
        nn.Sequential(Tuple())(x)


def test_compiled_python_module_matches_eager():
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.s = nn.Parameter(kiln.full([4], 0.5))

        def forward(self, x):
            return x * self.s

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(3, 4), Scale(), nn.GELU())  # C++ calls Python

        def forward(self, x):
            return self.body(x).sum(1)

    net = Net()
    x = kiln.randn(5, 3)
    eager = net(x)
    eager.sum().backward()
    grads = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()
    compiled = kiln.compile(net, backend="aot_eager")
    out = compiled(x)
    out.sum().backward()
    close(out, torch.tensor(eager.detach().numpy()))
    for p, g in zip(net.parameters(), grads):
        close(p.grad, torch.tensor(g.numpy()))


def test_containers():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear) and seq[0] is seq[0]
    tail = seq[1:]
    assert isinstance(tail, nn.Sequential) and [n for n, _ in tail.named_children()] == ["1", "2"]
    assert [type(m).__name__ for m in seq] == ["Linear", "ReLU", "Linear"]
    seq.append(nn.Sigmoid())
    seq[1] = nn.Tanh()
    assert [type(m).__name__ for m in seq] == ["Linear", "Tanh", "Linear", "Sigmoid"]
    with pytest.raises(IndexError):
        seq[7]
    from collections import OrderedDict
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert list(named.state_dict()) == ["fc.weight", "fc.bias"] and named.fc is named[0]
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    ml.append(nn.Linear(1, 2))
    ml += [nn.Identity()]
    assert len(ml) == 5 and len(ml[1:3]) == 2 and len(list(ml.parameters())) == 8
    assert repr(ml).startswith("ModuleList(\n  (0-2): 3 x Linear(in_features=1, out_features=1")
    md = nn.ModuleDict({"a": nn.Linear(1, 1), "b": nn.ReLU()})
    md["c"] = nn.Tanh()
    md.update([("d", nn.Sigmoid())])
    assert list(md) == ["a", "b", "c", "d"] and "c" in md and len(md) == 4
    assert [k for k, _ in md.items()] == list(md.keys())
    with pytest.raises(KeyError):
        md["zz"]


def test_transformer_encoder_matches_torch():
    torch.manual_seed(3)
    tlayer = tnn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    tenc = tnn.TransformerEncoder(tlayer, 2, norm=tnn.LayerNorm(8), enable_nested_tensor=False)
    klayer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    copy_weights(klayer, tlayer)
    kenc = nn.TransformerEncoder(klayer, 2, norm=nn.LayerNorm(8))
    assert list(kenc.state_dict()) == list(tenc.state_dict())
    copy_weights(kenc, tenc)
    check_layer(kenc, tenc, randn(5, 2, 8), atol=3e-5)


# ---- Parameter, init, utils ----

def test_parameter():
    data = kiln.randn(2, 3)
    p = nn.Parameter(data)
    assert isinstance(p, kiln.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.tolist() == data.tolist()
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    import copy
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.tolist() == p.tolist() and q is not p


def test_init_functions():
    w = kiln.empty(64, 32)
    assert nn.init.zeros_(w) is w and w.abs().sum().item() == 0
    nn.init.ones_(w)
    assert w.sum().item() == 64 * 32
    nn.init.constant_(w, 0.25)
    assert w.mean().item() == 0.25
    nn.init.eye_(w)
    assert w.sum().item() == 32
    bound = (6 / (64 + 32)) ** 0.5
    nn.init.xavier_uniform_(w)
    assert w.abs().max().item() <= bound and w.std().item() > bound / 3
    nn.init.kaiming_uniform_(w, a=5 ** 0.5)
    assert w.abs().max().item() <= 1 / 32 ** 0.5 + 1e-6
    nn.init.normal_(w, 2.0, 0.5)
    assert abs(w.mean().item() - 2.0) < 0.1
    nn.init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5)
    assert w.abs().max().item() <= 0.5
    nn.init.uniform_(w, -0.1, 0.1)
    assert w.abs().max().item() <= 0.1
    nn.init.orthogonal_(w)
    close(w.T @ w, torch.eye(32), atol=1e-4)
    for name, param in [("relu", None), ("tanh", None), ("leaky_relu", 0.2), ("selu", None)]:
        assert nn.init.calculate_gain(name, param) == pytest.approx(
            tnn.init.calculate_gain(name, param))
    assert nn.init._calculate_fan_in_and_fan_out(kiln.empty(8, 4, 3, 3)) == (36, 72)


def test_clip_grad_norm_matches_torch():
    grads = [randn(3, 4), randn(5, seed=1)]
    for norm_type in (2.0, 1.0, float("inf")):
        tps = [torch.zeros_like(g, requires_grad=True) for g in grads]
        kps = [nn.Parameter(kiln.zeros(*g.shape)) for g in grads]
        for tp, kp, g in zip(tps, kps, grads):
            tp.grad, kp.grad = g.clone(), k(g)
        tn = tnn.utils.clip_grad_norm_(tps, 1.5, norm_type=norm_type)
        kn = nn.utils.clip_grad_norm_(kps, 1.5, norm_type=norm_type)
        close(kn, tn)
        for tp, kp in zip(tps, kps):
            close(kp.grad, tp.grad)
    p = nn.Parameter(kiln.zeros(3))
    p.grad = kiln.tensor([-2.0, 0.5, 3.0])
    nn.utils.clip_grad_value_(p, 1.0)
    assert p.grad.tolist() == [-1.0, 0.5, 1.0]
    vec = nn.utils.parameters_to_vector(kps)
    assert vec.shape == (17,)
    nn.utils.vector_to_parameters(vec * 0, kps)
    assert all(kp.abs().sum().item() == 0 for kp in kps)
