"""The one door every file a user hands in goes through: tables, wirings, answer files, lessons,
logs (and a model folder's config.json, with read_json).

Checks, in order; each refusal is one WorkshopError line in one wording,
`cannot read WHAT 'PATH': REASON; WHAT TO DO`, e.g.
"cannot read table file '/dev/zero': it is a character device, not a regular file; give the
path of a file".

1. os.stat, before anything is opened: the path exists and is a regular file. A folder, a
   device (/dev/zero never ends) or a FIFO (opening one waits for a writer) is never opened.
2. At most MAX_BYTES (4 MB): by stat, and again while reading (some files lie about their size).
3. UTF-8 text without NUL bytes (a leading byte-order mark is dropped).
Data files (TOML or JSON, by the name's ending) also:
4. parse; each JSON object's keys are unique (TOML refuses duplicates itself);
5. nest at most MAX_DEPTH lists or tables deep (the parsers recurse: 3,000 levels would end
   in a RecursionError), hold no number of more than MAX_DIGITS digits (Python refuses to
   read an int of 4,300), every number is finite (no NaN or inf), and every text is text
   (no lone surrogate from a JSON "\ud800" escape: it could be neither printed nor saved).

Paths that are looked at, not read (a model folder, a shard, a .gguf), go through
`path_kind`: what is there, or one refusal in the same wording for every OSError (a name too
long, a loop of links, a folder on the way without permission) and for a NUL byte.
"""

import errno
import json
import math
import os
import re
import stat
import tomllib
from pathlib import Path

from attention_workshop.errors import WorkshopError

MAX_BYTES = 4_000_000
MAX_DEPTH = 32
MAX_DIGITS = 100
FORMATS = {".toml": "TOML", ".json": "JSON"}
_LONG_NUMBER = re.compile(rf"\d(?:_?\d){{{MAX_DIGITS},}}")  # TOML writes 1_000 for 1000
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
# JSON's "\ud800" escapes give lone surrogates: no character, and no UTF-8 to print or save
_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_TEXT = "holds a lone surrogate (a \\uD800-\\uDFFF escape without its pair), which is not text"
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (a named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))
_PERMISSION = ("permission denied", "check the file's permissions")
_OS_REASONS = {errno.ENOENT: ("it does not exist", "check the path"),
               errno.ENOTDIR: ("a part of the path is not a folder", "check the path"),
               errno.ENAMETOOLONG: ("the name is too long for the file system",
                                    "check the path"),
               errno.ELOOP: ("it is a loop of symbolic links", "check the path"),
               errno.ENOMEM: ("there is not enough memory to map it",
                              "free some memory (or raise ulimit -v)"),
               errno.EACCES: _PERMISSION, errno.EPERM: _PERMISSION}
_NUL = "the name holds a NUL byte"
PATH_LIMIT = 300  # characters of a path a message shows: a 5,000-character name is cut


def refuse(what, path, reason, todo):  # -> WorkshopError, for the caller to raise
    """The one wording. Example: refuse("answers file", "a.txt", "line 3: expected 'Q: A'",
    "see docs/quiz.md") -> "cannot read answers file 'a.txt': line 3: expected 'Q: A'; see
    docs/quiz.md"."""
    return WorkshopError(f"cannot read {what} '{printable(path, PATH_LIMIT)}': {reason}; {todo}")


class UnreadablePath(ValueError):
    """A path that cannot even be looked at; its text is the reason, e.g. "the name is too
    long for the file system", and `todo` what to do."""

    def __init__(self, reason, todo="check the path"):
        super().__init__(reason)
        self.todo = todo


def stat_kind(path):  # str | Path -> "file", "folder", "other", or None: nothing there
    """os.stat's answer, following links; UnreadablePath for anything else it can say.
    Example: stat_kind("a" * 300) -> UnreadablePath("the name is too long for the file
    system"); a link to nowhere -> None; /dev/zero -> "other"."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise UnreadablePath(*os_reason(exc)) from None
    except ValueError:  # a NUL byte in the name
        raise UnreadablePath(_NUL) from None
    return "folder" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def path_kind(path, what):  # -> stat_kind(path), or one refusal naming `what` and the path
    """Example: path_kind("a" * 300, "model") -> refused: "cannot read model 'aaa…': the name
    is too long for the file system; check the path"."""
    try:
        return stat_kind(path)
    except UnreadablePath as exc:
        raise refuse(what, path, str(exc), exc.todo) from None


def os_reason(exc):  # an OSError -> (reason, what to do), in this file's words
    return _OS_REASONS.get(exc.errno, ((exc.strerror or str(exc)).lower(), "check the path"))


def read_text(path, what):  # str | Path, e.g. "lesson" -> str
    """The text, after checks 1-3. Example: read_text("notes.md", "lesson") -> "# Notes\\n..."."""
    data = _read_bytes(path, what)
    nul = data.find(b"\0")
    if nul >= 0:
        raise refuse(what, path, f"it is not a UTF-8 text file (a NUL byte at byte {nul})",
                     "give a text file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise refuse(what, path, f"it is not a UTF-8 text file (byte 0x{data[exc.start]:02x} "
                     f"at byte {exc.start})", "save it as UTF-8 text") from None
    return text.removeprefix("\ufeff")


def read_data(path, what, todo):  # a .toml or .json file -> dict
    """Checks 1-5, then the top must be a table of keys. Example: `x = 1` in a.toml -> {"x": 1}."""
    text = read_text(path, what)
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise refuse(what, path, "its name must end in .toml or .json so its format is known",
                     todo)
    doc = parse_data(text, suffix, what, path, todo)
    if not isinstance(doc, dict):
        raise refuse(what, path, "expected a table of keys at the top", todo)
    return doc


def read_json(path, what, todo):  # -> any JSON value (a model's config.json: check it is a dict)
    """Checks 1-5 on a JSON file whatever its name. Example: '{"n_layer": 2}' -> {"n_layer": 2}."""
    return parse_data(read_text(path, what), ".json", what, path, todo)


def parse_data(text, suffix, what, path, todo):  # suffix ".toml" | ".json" -> parsed value
    """Checks 4-5 on text already read; `what`, `path` and `todo` go into the refusal."""
    long = _LONG_NUMBER.search(text)
    if long:
        digits = sum(c.isdigit() for c in re.match(r"[\d_]*", text[long.start():]).group())
        raise refuse(what, path, f"it holds {digits} digits in a row (numbers of at most "
                     f"{MAX_DIGITS} digits are read)", todo)
    try:
        if suffix == ".json":
            doc = json.loads(text, object_pairs_hook=unique_keys, parse_constant=float)
        else:
            doc = tomllib.loads(text)
    except DuplicateKey as exc:
        raise refuse(what, path, f"key {exc} appears twice in one object", "keep one") from None
    except RecursionError:
        raise refuse(what, path, f"it nests more than {MAX_DEPTH} levels deep", todo) from None
    except ValueError as exc:  # json.JSONDecodeError and tomllib.TOMLDecodeError
        reason = f"it is not valid {FORMATS[suffix]} ({' '.join(str(exc).split())})"
        raise refuse(what, path, reason, todo) from None
    problem = _check_values(doc)
    if problem:
        raise refuse(what, path, problem, todo)
    return doc


def printable(text, limit=None):  # str | Path -> one line, at most `limit` characters
    """Every character that is not printable escaped, long text cut: the one way any text a
    user gave (a path, a word, a name) is shown in a message. Example: printable("x" * 50, 10)
    -> 9 x's + "…"; "a\nb" -> the four characters a, backslash, n, b; "\x1b[2J" -> "\\x1b[2J"
    (no escape sequence reaches the terminal); "café" -> "café"; a byte that was not UTF-8
    (0xe9 in argv, kept by Python as U+DCE9) -> "\\xe9"."""
    text = str(text)
    if not text.isprintable():
        text = "".join(c if c.isprintable() else _escaped(c) for c in text)
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def _escaped(char):  # one character that is not printable -> its escape, in ASCII
    if "\udc80" <= char <= "\udcff":  # surrogateescape: the byte Python could not decode
        return f"\\x{ord(char) - 0xdc00:02x}"
    return char.encode("unicode_escape").decode("ascii")


class DuplicateKey(ValueError):
    """A JSON object gives one key twice; its text is the key, quoted and on one line."""


def unique_keys(pairs):  # json's object_pairs_hook: [(key, value)] -> dict, or DuplicateKey
    doc = {}
    for key, value in pairs:
        if key in doc:
            raise DuplicateKey(_quoted(key))
        doc[key] = value
    return doc


def _read_bytes(path, what):  # checks 1-2 -> bytes
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular(what, path, info.st_mode)
        if info.st_size > MAX_BYTES:
            raise _too_big(what, path, info.st_size)
        # O_NONBLOCK: should the path turn into a FIFO after the stat, open still returns.
        with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise _not_regular(what, path, mode)
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise refuse(what, path, *os_reason(exc)) from None
    except ValueError:  # a NUL byte in the name
        raise refuse(what, path, _NUL, "check the path") from None
    if len(data) > MAX_BYTES:
        raise _too_big(what, path)
    return data


def _not_regular(what, path, mode):
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return refuse(what, path, f"it is {kind}, not a regular file", "give the path of a file")


def _too_big(what, path, size=None):  # size None: stat said less, but reading found more
    shown = "it is" if size is None else f"it is {size / 1e6:.1f} MB,"
    return refuse(what, path, f"{shown} over the {MAX_BYTES / 1e6:g} MB cap",
                  "give a smaller file")


def _check_values(doc):  # -> the first problem, in reading order, or None
    stack = [(doc, 1, ())]  # (value, nesting level, where: (parent's where, key))
    while stack:
        value, level, where = stack.pop()
        if isinstance(value, dict | list):
            if level > MAX_DEPTH:
                return f"it nests more than {MAX_DEPTH} levels deep"
            items = list(value.items() if isinstance(value, dict) else enumerate(value))
            key = next((k for k, _ in items if isinstance(k, str) and _SURROGATE.search(k)), None)
            if key is not None:
                return f"{_location((where, key))} (a key) {_NOT_TEXT}"
            stack.extend((v, level + 1, (where, k)) for k, v in reversed(items))
        elif isinstance(value, float) and not math.isfinite(value):
            return f"{_location(where)} is {value}; every number must be finite (no NaN or inf)"
        elif isinstance(value, str) and _SURROGATE.search(value):
            return f"{_location(where)} {_NOT_TEXT}"
    return None


def _quoted(key):  # 'big bank' -> '"big bank"'; a newline shows as \n, a long key is cut
    return printable(json.dumps(key, ensure_ascii=False), 40)


def _location(where):  # ((((), "words"), "bank"), 1) -> 'words.bank[1]'
    keys = []
    while where:
        where, key = where
        keys.append(key)
    text = ""
    for key in reversed(keys):
        if isinstance(key, int):
            text += f"[{key}]"
        else:
            text += "." + (key if _BARE_KEY.fullmatch(key) else _quoted(key))
    return text.lstrip(".") or "the value"
