"""`attention-workshop generate PROMPT`: a decoder writes, token by token, and says where
it looked."""

import contextlib
import json

from attention_workshop.commands.real import model_help, progress, say
from attention_workshop.reading import printable  # paths in messages: one line

HELP = ("let a language model (SmolLM2) continue a prompt, greedily, token by token, and show "
        "where each new token looked")
DEFAULT_MODEL = "smollm2"
DECODERS = ("gpt2", "smollm2")  # the known names that write (minilm is an encoder)
MAX_NEW = 256  # new tokens at most in one call; the model's context bounds it further


def add_arguments(parser):
    parser.add_argument("prompt", metavar="PROMPT", help='e.g. "The river bank was"')
    parser.add_argument("--model", default=DEFAULT_MODEL, metavar="NAME_OR_PATH",
                        help=f"a decoder: {model_help(DEFAULT_MODEL, only=DECODERS)}")
    parser.add_argument("--tokens", type=int, default=32, metavar="N",
                        help=f"write at most N new tokens (1-{MAX_NEW}; it stops sooner at the "
                             "end-of-sequence token)")
    parser.add_argument("--chat", action="store_true",
                        help="wrap the prompt in the model's chat template (a user's message)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text, each token as it comes (default), or JSON")
    parser.add_argument("--ablate", metavar="HEADS",
                        help="switch these heads off (their outputs zeroed) at every step, e.g. "
                             "L18H6,L17H4: watch the continuation change (see the ablate "
                             "command)")
    parser.add_argument("--out", metavar="DIR",
                        help="also write generation.html into DIR: step through the new tokens "
                             "and see each one's attention, by layer and head")
    parser.add_argument("--download", action="store_true",
                        help="allow downloading gpt2 from the Hugging Face Hub (needs a network)")


def step_line(step):  # decode.Step -> one line: the token, and where the content heads looked
    """Tokens as the tokenizer spells them, as results.log and `real` do (Ġ a space).
    Example: '+ ĠParis       looked at: Ġof 0.33, Ġcapital 0.33, ĠFrance 0.07'."""
    looks = ", ".join(f"{t} {w:.2f}" for _, t, w in step.looked_at) or \
        "the first token and itself"
    return f"+ {step.token:12} looked at: {looks}"


def readable(token):  # a byte-level token as it reads: 'Ġbank' -> ' bank', 'Ċ' -> '\n'
    return (token or "").replace("\u0120", " ").replace("\u010a", "\n").replace("\u0109", "\t")


def json_report(model, generation, chat):  # -> str
    return json.dumps({
        "model": model.name, "chat": chat, "prompt_ids": generation.prompt_ids,
        "prompt_tokens": generation.prompt_tokens, "new_ids": generation.new_ids,
        "text": generation.text, "stopped": generation.stopped,
        "cache_bytes_per_token": generation.cache_bytes_per_token,
        "steps": [{"id": s.id, "token": s.token, "text": s.text,
                   "looked_at": [{"position": p, "token": t, "text": readable(t), "weight": w}
                                 for p, t, w in s.looked_at]} for s in generation.steps],
    }, ensure_ascii=False, allow_nan=False)


def main(args):
    from attention_workshop.errors import WorkshopError
    from attention_workshop.real import load_model
    from attention_workshop.sentences import check_sentence

    check_sentence(args.prompt)
    heads = None
    if args.ablate is not None:
        from attention_workshop.commands.ablate import parse_heads

        heads = parse_heads(args.ablate, "--ablate")
    if not 1 <= args.tokens <= MAX_NEW:
        raise WorkshopError(f"--tokens {args.tokens} is out of range: give 1 to {MAX_NEW}")
    with contextlib.ExitStack() as stack:
        stage = None
        if args.out:
            from attention_workshop.staging import staged

            stage = stack.enter_context(staged(args.out, "generate", expect=("generation.html",)))
        model = load_model(args.model, download=args.download, say=progress)
        from attention_workshop.real.decode import generate, prompt_ids

        ids = prompt_ids(model, args.prompt, args.chat)  # every error before any output
        if heads is not None:
            from attention_workshop.real.interventions import check_heads

            check_heads(model.config, heads, "--ablate")
        stream = args.format == "text"
        head = [f"{model.name}: {len(ids)} prompt tokens; writing up to {args.tokens} "
                "(greedy, KV cache); tokens as the tokenizer spells them: Ġ marks a space, "
                "Ċ a line break"]  # printed with the first token: generate checks the
        #                                room left for --tokens first, and refuses in one line

        def shown(step):
            print(*head, step_line(step), sep="\n", flush=True)
            head.clear()

        generation = generate(model, args.prompt, args.tokens, args.chat,
                              say=shown if stream else None, ablate=heads, ids=ids)
        if stage is not None:
            from attention_workshop.figures.generation_view import write_generation_view

            page = write_generation_view(model, generation, stage.path)
    if stream:
        c, n = model.config, len(generation.new_ids)
        end = ("at the end-of-sequence token" if generation.stopped == "end"
               else f"after {n} token{'s' * (n != 1)}")
        print(f"text: {json.dumps(generation.text, ensure_ascii=False)}")
        print(f"stopped {end}; the KV cache holds {generation.cache_bytes_per_token:,} bytes a "
              f"token ({c.n_kv_head} KV heads for {c.n_head} query heads)")
    else:
        print(json_report(model, generation, args.chat))
    if stage is not None:
        say(f"wrote {printable(stage.final(page))}")
    return 0

