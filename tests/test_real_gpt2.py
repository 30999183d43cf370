"""Our NumPy GPT-2 equals transformers' GPT2Model on small random GPT-2s built here.

No GPT-2 download is possible offline, so each test builds a tiny model with
transformers, saves it with save_pretrained (safetensors) next to a byte-level BPE
tokenizer.json trained on a few sentences, and loads that folder with load_model.
"""

import numpy as np
import pytest
from torch_reference import run_reference

from attention_workshop.real import load_model

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

CORPUS = ["the river bank", "the money bank", "a boat on the water by the bank",
          "she took a loan from the bank"]
SENTENCES = ["the river bank", "a boat by the money bank", "the bank the bank the bank the bank"]


def byte_level_tokenizer():  # a GPT-2-style tokenizer: byte-level BPE, no special tokens
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS * 5, trainer)
    return tok


def build_gpt2(folder, n_layer, n_head, n_embd=32, n_positions=24, seed=0, lm_head=True):
    """Save a random GPT-2 into `folder`; return the transformers model to compare against."""
    tok = byte_level_tokenizer()
    config = transformers.GPT2Config(
        vocab_size=tok.get_vocab_size(), n_positions=n_positions, n_embd=n_embd,
        n_layer=n_layer, n_head=n_head, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(seed)
    model_class = transformers.GPT2LMHeadModel if lm_head else transformers.GPT2Model
    model = model_class(config).eval()
    with torch.no_grad():  # make the biases and layer norms non-trivial (init leaves them 0 / 1)
        for name, p in model.named_parameters():
            if name.endswith("bias") or ".ln_" in name:
                p.add_(0.1 * torch.randn_like(p))
    model.save_pretrained(folder, safe_serialization=True)
    tok.save(str(folder / "tokenizer.json"))
    reference = transformers.GPT2Model.from_pretrained(folder, attn_implementation="eager")
    return reference.eval()


@pytest.mark.parametrize(("n_layer", "n_head", "n_embd", "lm_head"),
                         [(1, 1, 16, True), (2, 4, 32, False), (3, 2, 24, True),
                          (4, 8, 64, False)])
def test_attentions_and_hidden_equal_transformers(tmp_path, n_layer, n_head, n_embd, lm_head):
    reference = build_gpt2(tmp_path, n_layer, n_head, n_embd, lm_head=lm_head, seed=n_layer)
    ours = load_model(tmp_path)
    assert ours.config.family == "gpt2" and ours.config.d_head == n_embd // n_head
    for sentence in SENTENCES:
        result = ours.run(sentence)
        attentions, hidden = run_reference(reference, result.ids)
        T = len(result.ids)
        assert result.attentions.shape == attentions.shape == (n_layer, n_head, T, T)
        np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
        np.testing.assert_allclose(result.hidden, hidden[-1], rtol=0, atol=1e-4)
        np.testing.assert_allclose(result.hidden_states, hidden, rtol=0, atol=1e-4)


def test_long_input_equals_transformers(tmp_path):
    """Past fast/loop.SPLIT_FROM: each stage split over two threads, the causal mask whole."""
    model = build_gpt2(tmp_path, n_layer=2, n_head=4, n_positions=400)
    ours = load_model(tmp_path)
    result = ours.run(" ".join(SENTENCES * 12))
    assert len(result.ids) >= 128
    attentions, hidden = run_reference(model, result.ids)
    np.testing.assert_allclose(result.attentions, attentions, rtol=0, atol=1e-5)
    np.testing.assert_allclose(result.hidden_states, hidden, rtol=0, atol=1e-4)


def test_causal_no_token_sees_the_future(tmp_path):
    build_gpt2(tmp_path, n_layer=2, n_head=2)
    weights = load_model(tmp_path).run("the river bank by the water").attentions
    T = weights.shape[-1]
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    assert (weights[..., future] == 0).all()
    assert (weights[..., ~future] > 0).all()
    np.testing.assert_allclose(weights[..., 0, 0], 1.0)  # the first token can only see itself


def test_tokens_are_the_tokenizers_own(tmp_path):
    build_gpt2(tmp_path, n_layer=1, n_head=1)
    result = load_model(tmp_path).run("the river bank")
    tok = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    encoding = tok.encode("the river bank")
    assert result.tokens == encoding.tokens and result.ids == encoding.ids
    assert "".join(result.tokens).replace("\u0120", " ") == "the river bank"  # byte-level space


def test_float64_matches_float32(tmp_path):
    build_gpt2(tmp_path, n_layer=2, n_head=4)
    r32 = load_model(tmp_path).run(SENTENCES[1])
    r64 = load_model(tmp_path, dtype=np.float64).run(SENTENCES[1])
    assert r32.attentions.dtype == np.float32 and r64.attentions.dtype == np.float64
    np.testing.assert_allclose(r32.attentions, r64.attentions, rtol=0, atol=1e-6)
    np.testing.assert_allclose(r32.hidden, r64.hidden, rtol=0, atol=1e-5)


def test_values_equal_transformers(tmp_path):
    """c_attn's last third, split into heads, is each layer's values (transformers' hook)."""
    reference = build_gpt2(tmp_path, 2, 4, 32, seed=3)
    result = load_model(tmp_path).run(SENTENCES[1])
    caught = []
    hooks = [block.attn.c_attn.register_forward_hook(
        lambda _m, _i, out: caught.append(out[0].detach().numpy())) for block in reference.h]
    run_reference(reference, result.ids)
    for hook in hooks:
        hook.remove()
    T = len(result.ids)
    values = np.stack([c[:, 64:].reshape(T, 4, 8).transpose(1, 0, 2) for c in caught])
    np.testing.assert_allclose(result.values, values, rtol=0, atol=1e-5)
    queries = np.stack([c[:, :32].reshape(T, 4, 8).transpose(1, 0, 2) for c in caught])
    np.testing.assert_allclose(result.queries, queries, rtol=0, atol=1e-5)


def test_from_to_finds_words_in_byte_level_tokens(tmp_path, capsys):
    """GPT-2's tokens carry the space before a word ('Ġriver') and may split a rare word in
    pieces: --from/--to still find the word by where it sits. "rivers" is not in the tiny
    vocabulary, so it comes in pieces: its share is summed over them."""
    from attention_workshop import cli

    build_gpt2(tmp_path, 2, 2, 16, seed=5)
    sentence = "the rivers by the bank"
    result = load_model(tmp_path).run(sentence)
    text = "".join(t.replace("Ġ", " ") for t in result.tokens)
    assert text == sentence
    starts = np.cumsum([0] + [len(t) for t in result.tokens])  # each token's first character
    bank = [i for i, s in enumerate(starts[:-1]) if s >= sentence.index("bank") - 1
            and s < len(sentence) and result.tokens[i].strip("Ġ")]
    river = [i for i in range(len(result.tokens)) if starts[i] < sentence.index(" by")
             and starts[i + 1] > sentence.index("rivers")]
    assert len(river) >= 2  # split in pieces
    assert cli.main(["real", sentence, "--model", str(tmp_path), "--from", "bank", "--to",
                     "rivers"]) == 0
    out = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith('"bank" (token'))
    expected = result.attentions[:, :, bank][..., river].sum(-1).mean(-1)  # [L, H]
    for layer in range(2):
        assert out[start + 2 + layer].split()[2:] == [f"{v:.3f}" for v in expected[layer]]
