"""A loaded model and its run: text -> tokens -> the family's forward pass -> RunResult."""

from dataclasses import dataclass, field

import numpy as np

from attention_workshop.errors import WorkshopError
from attention_workshop.real.checkpoint import ModelConfig
from attention_workshop.real.families import family


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
        """
        tokens, ids, special = encode(self.tokenizer, sentence, self.config.n_ctx)
        out = family(self.config.family).forward(self.weights, self.config, np.asarray(ids))
        return RunResult(tokens=tokens, ids=ids, special=special, attentions=out["attentions"],
                         hidden=out["hidden_states"][-1], hidden_states=out["hidden_states"],
                         queries=out["queries"], keys=out["keys"], values=out["values"])


def check_sentence(sentence):  # str -> None, or WorkshopError
    """Refuse an empty sentence before any model is loaded for it."""
    if not sentence.strip():
        raise WorkshopError('the sentence is empty; give a few words, e.g. "the river bank"')


def encode(tokenizer, sentence, n_ctx):  # Tokenizer, str, int -> (tokens, ids, special)
    """Example (MiniLM): "the river bank" -> ['[CLS]', 'the', 'river', 'bank', '[SEP]'],
    [101, 1996, 2314, 2924, 102], [True, False, False, False, True] (the special tokens).
    A sentence longer than the model's n_ctx positions is an error, never silently cut."""
    check_sentence(sentence)
    encoding = tokenizer.encode(sentence)
    tokens, ids = list(encoding.tokens), list(encoding.ids)
    special = [bool(flag) for flag in encoding.special_tokens_mask]
    if not ids:
        raise WorkshopError(f"the sentence {sentence!r} gives no tokens; try ordinary words")
    if len(ids) > n_ctx:
        raise WorkshopError(f"the sentence is {len(ids)} tokens long, but the model has "
                            f"positions for {n_ctx}; shorten it")
    return tokens, ids, special
