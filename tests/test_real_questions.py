"""`real` on the learner's own question: which heads send one word to another (--from/--to),
how far a word's vector moves between two sentences (--vs/--word), and which heads the
default report picks. Every number against transformers' BertModel on MiniLM's weights."""

import json

import numpy as np
import pytest

from attention_workshop import cli

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def reference(minilm_reference):  # sentence -> (tokens, attentions [L, H, T, T], hidden)
    def run(sentence):
        tokens, _, attentions, hidden = minilm_reference(sentence)
        return tokens, attentions, hidden

    return run


def test_from_to_table_is_the_models_weights(reference, capsys):
    """The learner's own sentence, capitals and commas included: bank is token 2, river 6."""
    sentence = "The bank, by the river."
    assert cli.main(["real", sentence, "--from", "Bank", "--to", "river"]) == 0
    out = capsys.readouterr().out.splitlines()
    tokens, attentions, _ = reference(sentence)
    b, r = tokens.index("bank"), tokens.index("river")
    start = out.index(f'"bank" (token {b}) -> "river" (token {r}): its share of attention in '
                      "every layer and head")
    grid = attentions[:, :, b, r]  # [L, H]
    for layer in range(6):
        row = out[start + 2 + layer].split()
        assert row[:2] == ["layer", str(layer)]
        assert row[2:] == [f"{v:.3f}" for v in grid[layer]]
    best = np.argsort(-grid, axis=None, kind="stable")[:3]
    shown = ", ".join(f"L{lay} H{h}" for lay, h in zip(*np.unravel_index(best, grid.shape),
                                                        strict=True))
    strongest = out[start + 8]
    assert [part.split(" = ")[0] for part in strongest.split(": ", 1)[1].split(", ")] == \
        shown.split(", ")
    assert out[start + 9] == (f"  mean over all 72 heads: {grid.mean():.3f} (even spread over "
                              f"{len(tokens)} tokens: {1 / len(tokens):.3f})")


def test_from_to_marks_the_previous_token_head(reference, capsys):
    """In "the river bank" L0 H2 sends bank to river only because river comes just before."""
    assert cli.main(["real", "the river bank", "--from", "bank", "--to", "river"]) == 0
    out = capsys.readouterr().out
    assert "strongest: L0 H2 = 0.999 (previous-token head), L0 H4 = 0.788, L1 H9 = 0.736" in out


def cosine(a, b):
    return float(np.dot(a, b) / np.sqrt(np.dot(a, a) * np.dot(b, b)))


@pytest.mark.parametrize("pair", [("the river bank", "the money bank"),
                                  ("the bank raised interest rates", "a boat by the bank")])
def test_vs_gives_the_cosine_layer_by_layer(reference, capsys, pair):
    first, second = pair
    assert cli.main(["real", first, "--vs", second, "--word", "bank"]) == 0
    out = capsys.readouterr().out.splitlines()
    (t1, _, h1), (t2, _, h2) = reference(first), reference(second)
    i, j = t1.index("bank"), t2.index("bank")
    cosines = [cosine(h1[k, i], h2[k, j]) for k in range(7)]
    start = next(n for n, line in enumerate(out) if line.startswith('"bank" in'))
    assert out[start + 1] == f"  embeddings (before layer 0): cosine {cosines[0]:.3f}"
    assert out[start + 2:start + 8] == [f"  after layer {k}: cosine {c:.3f}"
                                        for k, c in enumerate(cosines[1:])]


def test_vs_on_the_lesson_pair_is_the_logs_s8(reference, capsys):
    assert cli.main(["real", "the river bank", "--vs", "the money bank", "--word", "bank"]) == 0
    out = capsys.readouterr().out
    for layer, value in enumerate(("0.912", "0.925", "0.932", "0.943", "0.954", "0.872")):
        assert f"  after layer {layer}: cosine {value}\n" in out  # results.log [S8] lines 4-9


def positional_or_resting(weights, special):
    """The default report's rule, written again as loops: a position head (of the words that
    look at another word, two at least, 3 of 4 or more look most at the word before, or at the
    word after), or a resting head (3 of 4 words or more look most at [CLS], [SEP] or
    themselves)."""
    words = [i for i, s in enumerate(special) if not s]
    top = {i: max(range(len(weights)), key=lambda j, i=i: weights[i][j]) for i in words}
    rest = [special[top[i]] or top[i] == i for i in words]
    resting = dict(zip(words, rest, strict=True))
    before = [top[i] == i - 1 for i in words[1:] if not resting[i]]
    after = [top[i] == i + 1 for i in words[:-1] if not resting[i]]
    return any(len(x) >= 2 and sum(x) >= 0.75 * len(x) for x in (before, after)) or (
        bool(rest) and sum(rest) >= 0.75 * len(rest))


@pytest.mark.parametrize("sentence", ["the bank raised interest rates", "the river bank",
                                      "she sat on the bank of the river"])
def test_default_report_picks_heads_that_look_by_content(reference, capsys, sentence):
    assert cli.main(["real", sentence]) == 0
    out = capsys.readouterr().out.splitlines()
    tokens, attentions, _ = reference(sentence)
    special = [t in ("[CLS]", "[SEP]") for t in tokens]
    content = {}
    for layer in range(6):
        for head in range(12):
            w = attentions[layer, head]
            if not positional_or_resting(w, special):
                content[(layer, head)] = max(w[i][j] for i in range(len(tokens))
                                             for j in range(len(tokens))
                                             if i != j and not special[i] and not special[j])
    best = sorted(content, key=lambda key: -content[key])[:3]
    shown = [tuple(int(x) for x in line.split(":")[0].replace("layer ", "").split(", head "))
             for line in out if line.startswith("layer ")]
    assert shown == best
    said = " ".join(line for line in out if not line.startswith(("layer", " ", "tokens")))
    assert "by content: left out" in said and "resting head" in said
    assert (0, 2) not in shown  # the previous-token head


def test_json_gains_the_answers(reference, capsys):
    assert cli.main(["real", "the river bank", "--from", "bank", "--to", "river", "--vs",
                     "the money bank", "--word", "bank", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"model", "tokens", "ids", "layers", "heads", "d_head", "attentions"} <= set(doc)
    tokens, attentions, _ = reference("the river bank")
    np.testing.assert_allclose(doc["from_to"]["weights"], attentions[:, :, 3, 2], atol=1e-5)
    assert (doc["from_to"]["from_tokens"], doc["from_to"]["to_tokens"]) == ([3], [2])
    assert doc["vs"]["positions"] == doc["vs"]["other_positions"] == [3]
    assert len(doc["vs"]["cosines"]) == 7 and doc["vs"]["cosines"][0] == pytest.approx(1.0)


def test_from_to_figure(reference, tmp_path, capsys):
    assert cli.main(["real", "the bank raised interest rates", "--from", "rates", "--to", "bank",
                     "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    for name in ("real_rates_bank_heads.png", "head_view.html"):
        assert (tmp_path / name).exists() and name in err
    assert (tmp_path / "real_rates_bank_heads.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(("argv", "message"), [
    (["real", "the river bank", "--from", "bank"], "--from needs --to too"),
    (["real", "the river bank", "--to", "bank"], "--to needs --from too"),
    (["real", "the river bank", "--vs", "the money bank"], "--vs needs --word too"),
    (["real", "the river bank", "--word", "bank"], "--word needs --vs too"),
    (["real", "the river bank", "--vs", "  ", "--word", "bank"], "the sentence is empty"),
    (["real", "the river bank", "--from", "bank", "--to", "money"],
     "'money' is not a word of the sentence \"the river bank\"; choose one of: the, river, bank"),
    (["real", "the river bank", "--vs", "the money bank", "--word", "river"],
     "'river' is not a word of the sentence \"the money bank\""),
])
def test_bad_questions_are_one_line_and_exit_2(reference, capsys, argv, message):
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.splitlines()
    assert err[-1].startswith("attention-workshop: error: ") and message in err[-1]


def test_layer_figures_have_no_tick_marks_beside_the_numbers(monkeypatch, tmp_path):
    """A tick mark touching '0.36' in the first column reads as '-0.36'."""
    from attention_workshop.figures import encoder as real

    drawn = []
    monkeypatch.setattr(real, "save", lambda fig, path: drawn.append(fig) or path)
    tokens = ["[CLS]", "the", "bank", "raised", "interest", "rates", "[SEP]"]
    weights = np.full((12, 7, 7), 1 / 7)
    real.head_grid(tokens, weights, "t", tmp_path / "x.png")
    ax = drawn[0].axes[0]  # the 12 heads' images, in one Axes
    # the numbers are there: glyphs.annotate_cells draws them as one collection per head
    assert len(ax.images) == 12
    assert len([c for c in ax.collections if getattr(c, "cell_texts", None)]) == 12
    # no axis is drawn (no tick mark); the tokens label every head's rows and columns
    assert not ax.axison
    assert [c.labels for c in ax.collections if hasattr(c, "labels")] == [tokens] * 12
