"""A loaded model: its config, its weights by checkpoint name, its tokenizer, and `run`."""

from dataclasses import dataclass, field

import numpy as np

from attention_workshop.real import bert, gpt2
from attention_workshop.real.config import ModelConfig
from attention_workshop.real.tokenize import encode

FORWARD = {"bert": bert.forward, "gpt2": gpt2.forward}


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
        out = FORWARD[self.config.family](self.weights, self.config, np.asarray(ids))
        return RunResult(tokens=tokens, ids=ids, special=special, attentions=out["attentions"],
                         hidden=out["hidden_states"][-1], hidden_states=out["hidden_states"],
                         queries=out["queries"], keys=out["keys"])
