"""A loaded model and its run: text -> tokens -> the family's forward pass -> RunResult."""

from dataclasses import dataclass, field

import numpy as np

from attention_workshop.errors import WorkshopError
from attention_workshop.real.checkpoint import ModelConfig, all_finite
from attention_workshop.real.families import family
from attention_workshop.sentences import check_sentence
from attention_workshop.userfiles import printable

MAX_TOKENS = 512  # [n_layer, n_head, T, T] weights are kept, printed and drawn: T stays modest


@dataclass(frozen=True)
class RunResult:
    tokens: list  # as the tokenizer writes them: ['[CLS]', 'the', 'river', 'bank', '[SEP]']
    ids: list
    special: list  # True where the model added the token itself ([CLS], [SEP])
    attentions: np.ndarray  # [n_layer, n_head, T, T]; row i = how token i spreads its attention
    hidden: np.ndarray  # [T, d_model], the last layer's output
    hidden_states: np.ndarray  # [n_layer + 1, T, d_model]: embeddings, then every layer
    queries: np.ndarray  # [n_layer, n_head, T, d_head]
    keys: np.ndarray  # [n_layer, n_head, T, d_head]
    values: np.ndarray  # [n_layer, n_head, T, d_head]: head h's output is attentions @ values

    def _repr_html_(self):  # a notebook shows tables; a terminal keeps the plain repr
        from attention_workshop.notebook_html import run_html
        return run_html(self)


@dataclass(frozen=True)
class Model:
    name: str
    config: ModelConfig
    weights: dict = field(repr=False)  # checkpoint name -> array
    tokenizer: object = field(repr=False)

    def run(self, sentence):  # str -> RunResult
        """Tokenize `sentence` and run the forward pass in NumPy.

        Example: load_model("minilm").run("the river bank").attentions.shape -> (6, 12, 5, 5).
        Numbers that overflow (huge weights) are refused, naming the layer, never returned.
        """
        tokens, ids, special = encode(self.tokenizer, sentence, self.config.n_ctx)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # checked below
            out = family(self.config.family).forward(self.weights, self.config, np.asarray(ids))
        check_finite(self.name, out)
        return RunResult(tokens=tokens, ids=ids, special=special, attentions=out["attentions"],
                         hidden=out["hidden_states"][-1], hidden_states=out["hidden_states"],
                         queries=out["queries"], keys=out["keys"], values=out["values"])


def check_finite(name, out):  # forward's dict of arrays -> None, or WorkshopError
    """The first layer whose numbers are NaN or infinite, named. Example: weights of 1e30 ->
    "gpt2's numbers overflow to NaN or infinity in layer 0 (its attention); ...".

    Only the hidden states are summed (all_finite): a layer's attention weights reach its
    output through weights @ v, W_O and a layer norm, and a NaN or an infinity survives each
    (inf * 0 is NaN), so finite outputs mean finite weights. The [L, H, T, T] weights are
    read only to name a failing layer's cause: summing them all took 13-22 ms at 512 tokens.
    tests/test_real_model.py checks that claim on both families.
    """
    hidden, attentions = out["hidden_states"], out["attentions"]  # [L + 1, T, D], [L, H, T, T]
    for i in range(len(hidden)):  # all_finite: one summing pass, no boolean copy (3x faster)
        if all_finite(hidden[i]):
            continue
        if i == 0:
            where = "the embeddings"
        elif not all_finite(attentions[i - 1]):
            where = f"layer {i - 1} (its attention weights)"
        else:
            where = f"layer {i - 1} (its output)"
        raise WorkshopError(f"{name}'s numbers overflow to NaN or infinity in {where}: its "
                            "weights or config.json's values (layer_norm_eps) are out of range; "
                            "nothing is shown")


def special_ids(tokenizer):  # -> {id} of the tokenizer's special tokens ([CLS], <|endoftext|>)
    return {i for i, token in tokenizer.get_added_tokens_decoder().items() if token.special}


def encode(tokenizer, sentence, n_ctx):  # Tokenizer, str, int -> (tokens, ids, special)
    """Example (MiniLM): "the river bank" -> ['[CLS]', 'the', 'river', 'bank', '[SEP]'],
    [101, 1996, 2314, 2924, 102], [True, False, False, False, True] (the special tokens).
    A sentence longer than the model's n_ctx positions (or MAX_TOKENS) is an error, never
    silently cut; so is one of special tokens only, typed ("[CLS] [SEP]") or not."""
    check_sentence(sentence)
    encoding = tokenizer.encode(sentence)
    tokens, ids = list(encoding.tokens), list(encoding.ids)
    special = [bool(flag) for flag in encoding.special_tokens_mask]
    typed = special_ids(tokenizer)
    if not any(not flag and i not in typed for i, flag in zip(ids, special, strict=True)):
        shown = printable(" ".join(tokens), 80) if tokens else "none"
        raise WorkshopError(f"the sentence gives no word token (its tokens: {shown}); give a "
                            'few words, e.g. "the river bank"')
    if len(ids) > min(n_ctx, MAX_TOKENS):
        most = (f"the model has positions for {n_ctx}" if n_ctx <= MAX_TOKENS
                else f"real reads at most {MAX_TOKENS}")
        raise WorkshopError(f"the sentence is {len(ids)} tokens long, but {most}; shorten it")
    return tokens, ids, special
