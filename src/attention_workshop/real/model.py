"""A loaded model and its run: text (or token ids) -> the family's forward pass -> RunResult.

The forward pass is the family's readable one (bert.py, gpt2.py, llama.py), or its
accelerator in float32 where real/fast/ has one (proved equal to it).
"""

import contextlib
import functools
import weakref
from dataclasses import dataclass, field

import numpy as np

from attention_workshop.errors import WorkshopError
from attention_workshop.reading import printable
from attention_workshop.real.accelerator import forward_for
from attention_workshop.real.config import MAX_TOKENS, ModelConfig
from attention_workshop.real.families import Weights, family, running_layer
from attention_workshop.real.formats.finite import all_finite
from attention_workshop.sentences import check_sentence


def shape_of(value):  # a field's value -> its short description for a repr
    """Example: a float32 array [6, 12, 5, 5] -> 'float32[6, 12, 5, 5]'; 7 tokens -> '[7 items]'."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype}[{', '.join(map(str, value.shape))}]"
    if isinstance(value, list) and len(value) > 6:
        return f"[{', '.join(map(repr, value[:3]))}, ... {len(value)} items]"
    return repr(value)


@dataclass(frozen=True, repr=False)
class RunResult:
    tokens: list  # as the tokenizer writes them: ['[CLS]', 'the', 'river', 'bank', '[SEP]']
    ids: list
    special: list  # True where the model added the token itself ([CLS], [SEP])
    attentions: np.ndarray  # [n_layer, n_head, T, T]; row i = how token i spreads its attention
    hidden: np.ndarray  # [T, d_model], the last layer's output
    hidden_states: np.ndarray  # [n_layer + 1, T, d_model]: embeddings, then every layer
    queries: np.ndarray  # [n_layer, n_head, T, d_head]
    keys: np.ndarray  # [n_layer, n_kv_head, T, d_head]: the model's own key/value heads
    values: np.ndarray  # [n_layer, n_kv_head, T, d_head]: head h blends values[h // group]
    head_outputs: np.ndarray = None  # [n_layer, n_head, T, d_head]: each head's before W_O
    head: object = field(default=None, repr=False, compare=False)  # hidden -> logits

    @functools.cached_property
    def logits(self):  # [T, n_vocab]: each position's next-token scores; None for an encoder
        """Computed when first read (a tied head multiplies by the whole embedding table)."""
        return None if self.head is None else self.head(self.hidden)

    def __repr__(self):  # short, like numpy's: shapes and a few tokens, not 1,700 lines
        parts = ", ".join(f"{name}={shape_of(getattr(self, name))}" for name in
                          ("tokens", "attentions", "hidden_states", "queries", "keys",
                           "logits"))
        return f"RunResult({parts})"

    def _repr_html_(self):  # a notebook shows tables; a terminal keeps the plain repr
        from attention_workshop.notebook_html import run_html
        return run_html(self)


@dataclass(frozen=True)
class Model:
    name: str
    config: ModelConfig
    weights: dict = field(repr=False)  # checkpoint name -> array
    tokenizer: object = field(repr=False)
    fast: bool = True  # run real/fast/'s accelerator where the family has one (float32)
    eos_id: int | None = None  # a decoder's end-of-sequence token: generation stops there
    chat_template: str | None = field(default=None, repr=False)  # the model's own (ChatML)
    # weight name -> fast.blocks.FileBlocks: a GGUF's float32 matrix with the file's 4- or
    # 8-bit blocks, which the accelerator reads for a single token (a generated one)
    blocks: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):  # the weights as families.Weights: each layer split out once
        if not isinstance(self.weights, Weights):
            object.__setattr__(self, "weights", Weights(self.weights))

    @property
    def dtype(self):  # the working precision, the weights': "float32", or "float64" for
        # digits that never change; kept until an entry changes (asked twice a generated token)
        return self.weights.kept("dtype", lambda weights: str(next(iter(weights.values())).dtype))

    def encode(self, text):  # str -> [ids], as run(text) would run them
        return encode(self.tokenizer, text, self.config.n_ctx)[1]

    def generate(self, prompt, tokens=32, chat=False, ablate=None):  # -> decode.Generation
        """Greedy decoding with a KV cache (decode.py) after `prompt`: text, or token ids run
        as given (as run takes them); `ablate` [(layer, head)]: those heads switched off
        (zero) at every step. Example: load_model("smollm2")
        .generate("The capital of France is", tokens=3).text -> " Paris. The"."""
        from attention_workshop.real.decode import generate

        ids = None
        if not isinstance(prompt, str):  # ids run as given, as run takes them
            if chat:  # the chat template wraps text, not ids already chosen
                raise WorkshopError("a chat prompt is text: give the user's words as a "
                                    "string, or the token ids without chat")
            ids = given_ids(self.tokenizer, prompt, self.config)[1]
        return generate(self, prompt, tokens, chat, ablate=ablate, ids=ids)

    def run(self, sentence, past=None, hooks=None, ablate=None, how="zero", patch=None):
        # str | [ids] -> RunResult
        """Tokenize `sentence` (or take its token ids as they are) and run the forward pass.

        Example: load_model("minilm").run("the river bank").attentions.shape -> (6, 12, 5, 5).
        Numbers that overflow (huge weights) are refused, naming the layer, never returned.
        `past` (a decoder's earlier RunResult on the tokens before) is its KV cache: only
        the new tokens run, attending to the cached keys and values (decode.py). `hooks`
        (hooks.Hooks) read or replace the forward's named points (interventions).
        `ablate` [(layer, head)]: those heads' outputs zeroed (how="zero") or replaced by
        their mean over the positions ("mean"); `patch` {(layer, head): another run of the
        same length}: taken from it (interventions.py). An empty list is a plain run.
        """
        if isinstance(sentence, str):
            tokens, ids, special = encode(self.tokenizer, sentence, self.config.n_ctx)
        else:
            tokens, ids, special = given_ids(self.tokenizer, sentence, self.config)
        if past is not None:  # the cached tokens and the new ones share the positions
            check_length(past.keys.shape[2] + len(ids), self.config.n_ctx)
        if ablate is not None or patch is not None or how != "zero":
            from attention_workshop.real.interventions import interventions

            switched = interventions(self.config, len(ids), ablate, how, patch, past is not None)
            hooks = switched.then(hooks) if switched else hooks
        fast = self.accelerator(bool(hooks))  # decided once: the pass and its head agree
        out = self.forward(np.asarray(ids), past, hooks, fast)
        check_finite(self.name, out)
        return RunResult(tokens=tokens, ids=ids, special=special, attentions=out["attentions"],
                         hidden=out["hidden_states"][-1], hidden_states=out["hidden_states"],
                         queries=out["queries"], keys=out["keys"], values=out["values"],
                         head_outputs=out["head_outputs"], head=self.head(fast is not None))

    @functools.cached_property
    def fast_weights(self):  # -> the weights the accelerator reads: FileBlocks where kept
        return Weights({**self.weights, **self.blocks})

    def accelerator(self, hooks=False):  # -> real/fast/'s forward for this model, or None
        """None: the readable forward runs (float64, a family with no accelerator, fast=False,
        hooks that this family's accelerator does not honour, or real/fast/ not installed)."""
        return forward_for(self.config, self.dtype, hooks) if self.fast else None

    def weights_for(self, fast):  # -> the weights a forward pass (fast or readable) reads
        return self.fast_weights if fast and self.blocks else self.weights

    def head(self, fast=None):  # -> hidden [T, d_model] -> logits [T, n_vocab], or None
        """The output head on the weights the pass read (`fast`: whether the accelerator ran;
        None: as a plain run would decide). None for an encoder: no next token."""
        fam = family(self.config.family)
        if fam.logits is None:
            return None
        weights = self.weights_for(self.accelerator() is not None if fast is None else fast)

        def next_token_scores(hidden):
            with np.errstate(over="ignore", invalid="ignore"):  # checked below
                scores = fam.logits(weights, self.config, hidden)
            if not all_finite(scores):
                raise WorkshopError(f"{self.name}'s numbers overflow to NaN or infinity in its "
                                    "output head (the next token's scores): its weights are "
                                    "out of range; nothing is shown")
            return scores
        return next_token_scores

    def forward(self, ids, past=None, hooks=None, fast=False):
        # [T] ints, a cache, hooks, the accelerator's forward (None: the readable one; False:
        # decide here) -> the family's dict of arrays
        from attention_workshop.real.blas_threads import one_blas_thread

        cfg, fam = self.config, family(self.config.family)
        if fast is False:
            fast = self.accelerator(bool(hooks))
        weights = self.weights_for(fast is not None)
        # float64's digits never depend on the thread count (blas_threads.py)
        threads = one_blas_thread() if self.dtype == "float64" else contextlib.nullcontext()
        running_layer(reset=True)
        try:
            # an overflow anywhere stops the pass, even one a later norm would hide (huge
            # numbers squared to infinity make a layer norm's output its bias: finite, wrong)
            with np.errstate(over="raise", invalid="raise", divide="ignore"), threads:
                forward = fast or fam.forward
                given = {"hooks": hooks} if hooks else {}
                if past is not None:  # a decoder's KV cache: the earlier tokens' keys, values
                    given["past"] = {"keys": past.keys, "values": past.values}
                out = forward(weights, cfg, ids, **given)
        except FloatingPointError as exc:
            layer = running_layer()
            where = "the embeddings" if layer is None else f"layer {layer}"
            raise WorkshopError(f"{self.name}'s numbers overflow to NaN or infinity in {where} "
                                f"({exc}): its weights or config.json's values (the norm's "
                                "epsilon) are out of range; nothing is shown") from None
        return out


def check_finite(name, out):  # forward's dict of arrays -> None, or WorkshopError
    """The first layer whose numbers are NaN or infinite, named. Example: weights of 1e30 ->
    "gpt2's numbers overflow to NaN or infinity in layer 0 (its attention); ...".

    Only the hidden states are summed (all_finite): a layer's
    attention weights reach its output through weights @ v, W_O and a norm, and a NaN or an
    infinity survives each (inf * 0 is NaN), so finite outputs mean finite weights. The
    [L, H, T, T] weights are read only to name a failing layer's cause.
    tests/test_real_model.py checks that claim on every family.
    """
    hidden, attentions = out["hidden_states"], out["attentions"]  # [L + 1, T, D], [L, H, T, T]
    if isinstance(hidden, np.ndarray) and all_finite(hidden):  # one sum for all (a generated
        return  # token: 31 sums of 576 numbers were ~0.1 ms of its ~6)
    for i in range(len(hidden)):  # all_finite: one summing pass, no boolean copy
        if all_finite(hidden[i]):
            continue
        if i == 0:
            where = "the embeddings"
        elif not all_finite(attentions[i - 1]):
            where = f"layer {i - 1} (its attention weights)"
        else:
            where = f"layer {i - 1} (its output)"
        raise WorkshopError(f"{name}'s numbers overflow to NaN or infinity in {where}: its "
                            "weights or config.json's values (the norm's epsilon) are out of "
                            "range; nothing is shown")


_special = weakref.WeakKeyDictionary()  # tokenizer -> (its vocabulary's size, special_ids)


def special_ids(tokenizer):  # -> {id} of the tokenizer's special tokens ([CLS], <|endoftext|>)
    """Found again only when the vocabulary has changed size (tokens added): a generated
    token's run asks for them each step, and reading every added token took ~20-50 us of it."""
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    found = _special.get(tokenizer)
    if found is None or found[0] != size:
        found = (size, frozenset(i for i, token in tokenizer.get_added_tokens_decoder().items()
                                 if token.special))
        _special[tokenizer] = found
    return found[1]


def given_ids(tokenizer, ids, cfg):  # [ints] -> (tokens, ids, special), each id checked
    """Token ids run as given, nothing added. Example: [1, 3] -> (['<|im_start|>', 'the'],
    [1, 3], [True, False]) for a tokenizer whose id 1 is special."""
    ids = [int(i) for i in ids] if all(isinstance(i, int | np.integer) and not isinstance(
        i, bool) for i in ids) else None
    if not ids:
        raise WorkshopError("give token ids as a non-empty list of whole numbers")
    bad = [i for i in ids if not 0 <= i < cfg.n_vocab]
    if bad:
        raise WorkshopError(f"token id {bad[0]} is outside the model's vocabulary (ids 0-"
                            f"{cfg.n_vocab - 1})")
    check_length(len(ids), cfg.n_ctx)
    typed = special_ids(tokenizer)
    tokens = [tokenizer.id_to_token(i) or f"<{i}>" for i in ids]
    return tokens, ids, [i in typed for i in ids]


def check_length(T, n_ctx):  # tokens, the model's positions -> None, or WorkshopError
    if T > min(n_ctx, MAX_TOKENS):
        most = (f"the model has positions for {n_ctx}" if n_ctx <= MAX_TOKENS
                else f"real reads at most {MAX_TOKENS}")
        raise WorkshopError(f"the sentence is {T} tokens long, but {most}; shorten it")


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
    check_length(len(ids), n_ctx)
    return tokens, ids, special
