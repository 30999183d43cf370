"""The reference side of the head-pattern tests: each kind's cells found from the ids by plain
Python (never by head_patterns' formula), transformers' attentions and logits on given ids,
and a tiny causal GPT-2 with an output head, built with transformers."""

import functools

import numpy as np


def target_cells(ids, kind, lead):  # [T] ids, kind, 0 or 1 -> [(row, col)]
    """induction: every token with an earlier occurrence looks at the token after that
    occurrence (found by searching the ids); previous: every token of the repeated part but
    its first looks one back; sink: every row but the first looks at position 0."""
    cells = []
    for i in range(1, len(ids)):
        earlier = [j for j in range(i) if ids[j] == ids[i]]
        if kind == "induction" and earlier:
            cells.append((i, earlier[-1] + 1))
        elif kind == "previous" and i > lead:
            cells.append((i, i - 1))
        elif kind == "sink":
            cells.append((i, 0))
    return cells


def reference_scores(attentions, ids, kind, lead):  # [L, H, T, T] -> [L, H] by loops
    cells = target_cells(ids, kind, lead)
    return np.array([[sum(float(head[i][j]) for i, j in cells) / len(cells) for head in layer]
                     for layer in attentions])


def torch_run(model, ids):  # transformers model, ids -> (attentions [L, H, T, T], logits or None)
    import torch

    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), output_attentions=True)
    logits = getattr(out, "logits", None)
    return (torch.stack(out.attentions)[:, 0].numpy(),
            None if logits is None else logits[0].double())


@functools.cache
def minilm_bert():  # transformers' BertModel on MiniLM's own files, eager (weights returned)
    import transformers

    from attention_workshop.real import catalog

    folder = str(catalog.minilm_folder())
    return transformers.BertModel.from_pretrained(folder, attn_implementation="eager").eval()


def build_causal_gpt2(folder, n_layer=2, n_head=4, n_embd=32, n_positions=128, seed=0):
    """A random GPT2LMHeadModel saved into `folder` with a byte-level BPE tokenizer.json of
    about 300 tokens; returns transformers' model (eager) to compare against."""
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["the river bank", "a loan from the money bank"] * 5, trainer)
    config = transformers.GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=n_positions,
                                     n_embd=n_embd, n_layer=n_layer, n_head=n_head)
    torch.manual_seed(seed)
    model = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():  # init's 0.02 leaves every row near uniform: sharpen the scores
        for name, p in model.named_parameters():
            if name.endswith("attn.c_attn.weight"):
                p.mul_(8.0)
    model.save_pretrained(folder, safe_serialization=True)
    tok.save(str(folder / "tokenizer.json"))
    return transformers.GPT2LMHeadModel.from_pretrained(
        folder, attn_implementation="eager").eval()


def run_cli(argv, capsys):  # -> (exit code, stdout, stderr) of attention-workshop argv, in-process
    from attention_workshop import cli

    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err
