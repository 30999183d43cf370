"""Check a lesson's cross-checks against results.log: find citations, their quoted blocks, compare.

A lesson is a text or markdown file, or a Jupyter notebook read as text by
`lesson_notebook.notebook_text`.

A citation reads "cross-check: results.log line 28", "lines 29-34" or "lines 46 and 72".
The quoted block is what follows the citation's paragraph: indented paragraphs,
paragraphs headed `[Sn]` at column 0, or ``` fenced blocks, up to the next prose
paragraph. Several may follow (a code listing, then the log lines); the block
checked is the one that stands in the log, contiguous, inside the cited lines.

Example: citation "lines 29-30", log lines 29-30 = ["  a", "  b"], quoted block
["  b"] -> ok (it stands at line 30); quoted block ["  c"] -> fails at line 29.
"""

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from attention_workshop.userfiles import printable, refuse

LAST_LINE = 99_999  # results.log has 125 lines; a bigger number is a typo (and a huge range)
CITATION = re.compile(
    r"cross-check:\s+results\.log\s+"
    r"(?:lines?\s+(?P<a>\d+)(?:\s*(?P<sep>[-\u2013]|and)\s*(?P<b>\d+))?)"
)
SECTION_HEAD = re.compile(r"\[S\d+\]")
FENCE = "```"


@dataclass(frozen=True)
class Citation:
    line: int  # 1-based line of the lesson where "cross-check" stands
    label: str  # as shown in reports: "line 28", "lines 29-34", "lines 46 and 72"
    cited: tuple  # the log line numbers cited, in order: (29, 30, ..., 34) or (46, 72)


@dataclass(frozen=True)
class Block:
    start: int  # 1-based lesson line of the block's first line
    lines: tuple


@dataclass(frozen=True)
class Result:
    citation: Citation
    ok: bool
    detail: str  # "ok", or what differs


def find_citations(text, name="lesson", place=None):
    """Every citation in `text`, in order. An impossible one (line 0, B < A, a number past
    LAST_LINE) raises one WorkshopError line naming the lesson `name` and its line (or
    `place(line)`, a notebook's "cell 4, line 2")."""
    citations = []
    for m in CITATION.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        wrong = _impossible(m["a"], m["b"], m["sep"])
        if wrong:
            label = printable(_label(m["a"], m["b"], m["sep"]), 60)
            where = place(line) if place else f"line {line}"
            raise refuse("lesson", name, f"{where}: 'results.log {label}' {wrong}",
                         "cite log lines that exist, e.g. 'results.log lines 29-34'")
        a, b = int(m["a"]), int(m["b"]) if m["b"] else None
        cited = (a,) if b is None else (a, b) if m["sep"] == "and" else tuple(range(a, b + 1))
        citations.append(Citation(line, _label(a, b, m["sep"]), cited))
    return citations


def _label(a, b, sep):  # 29, 34, "-" -> "lines 29-34"; 46, 72, "and" -> "lines 46 and 72"
    if b is None:
        return f"line {a}"
    return f"lines {a} and {b}" if sep == "and" else f"lines {a}-{b}"


def _impossible(a, b, sep):  # the digits as written -> why the citation cannot hold, or None
    """Example: ("1", "0", "and") -> "cites line 0, but log lines count from 1"."""
    digits = [n.lstrip("0") or "0" for n in ([a] if b is None else [a, b])]
    if any(len(n) > len(str(LAST_LINE)) or int(n) > LAST_LINE for n in digits):
        return f"cites a line past {LAST_LINE}, which no results.log reaches"
    if min(int(n) for n in digits) < 1:
        return "cites line 0, but log lines count from 1"
    if b is not None and sep != "and" and int(b) < int(a):
        return "is an impossible range (it ends before it starts)"
    return None


def _is_quoted(line):
    return line[:1] in (" ", "\t") or SECTION_HEAD.match(line) is not None


def quoted_blocks(lines, after):
    """The candidate blocks following the paragraph that holds 0-based line `after`.

    Example: ["see (cross-check...):", "", "    code", "", "  log line", "", "Prose."]
    with after=0 -> [Block(3, ("    code",)), Block(5, ("  log line",))].
    """
    i = after + 1
    while i < len(lines) and lines[i].strip() and not _is_quoted(lines[i]):
        i += 1  # the rest of the citation's own paragraph
    blocks = []
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.lstrip().startswith(FENCE):
            end = i + 1
            while end < len(lines) and not lines[end].lstrip().startswith(FENCE):
                end += 1
            blocks.append(Block(i + 2, tuple(lines[i + 1 : end])))
            i = end + 1
        elif _is_quoted(line):
            end = i
            while end < len(lines) and lines[end].strip() and _is_quoted(lines[end]):
                end += 1
            blocks.append(Block(i + 1, tuple(lines[i:end])))
            i = end
        else:
            break  # prose: the quoted region is over
    return [b for b in blocks if b.lines]


def _alignments(block, cited):
    """Each way to lay `block` along the cited lines: a list of (lesson text, log line or None)."""
    offsets = range(max(1, len(cited) - len(block.lines) + 1))
    for o in offsets:
        yield [
            (text, cited[o + k] if o + k < len(cited) else None)
            for k, text in enumerate(block.lines)
        ]


def _score(pairs, log):
    """(lines equal, summed similarity): how close one alignment comes to the log."""
    equal, similar = 0, 0.0
    for text, n in pairs:
        if n is not None:
            equal += text == log[n - 1]
            similar += SequenceMatcher(None, text, log[n - 1]).ratio()
    return equal, similar


def _found_at(block, log):
    """1-based log line where the whole block stands, contiguous, or None."""
    size = len(block.lines)
    for start in range(len(log) - size + 1):
        if tuple(log[start : start + size]) == block.lines:
            return start + 1
    return None


def _lesson_line(n):
    return f"lesson line {n}"


def _first_difference(block, pairs, log, place=_lesson_line):
    for k, (text, n) in enumerate(pairs):
        where = place(block.start + k)
        if n is None:
            return f"{where} {text!r} lies past the cited lines"
        if text != log[n - 1]:
            return f"{where} expected {text!r}, log line {n} has {log[n - 1]!r}"
    return None


def check_citation(citation, blocks, log, place=None):
    """Does one of `blocks` stand in `log` (a list of lines), contiguous, inside the cited lines?
    `place(n)` names the lesson's line n in a report ("cell 5, line 3"); by default "lesson
    line n"."""
    place = place or _lesson_line
    past = [n for n in citation.cited if n > len(log)]
    if past:
        return Result(citation, False, f"line {past[0]} is past the end of the log "
                                       f"({len(log)} lines)")
    if not blocks:
        return Result(citation, True, "ok (no quoted block; the lines exist)")
    best = None
    for block in blocks:
        for pairs in _alignments(block, citation.cited):
            if _first_difference(block, pairs, log, place) is None:
                return Result(citation, True, "ok")
            key = _score(pairs, log)
            if best is None or key > best[0]:
                best = (key, block, pairs)
    _, block, pairs = best
    detail = _first_difference(block, pairs, log, place)
    found = _found_at(block, log)
    if found is not None:
        detail += f" (the block stands at log lines {found}-{found + len(block.lines) - 1})"
    return Result(citation, False, detail)


def check_text(text, log, name="lesson", place=None):
    """Check every citation in a lesson's `text` against `log` (a list of lines)."""
    lines = text.splitlines()
    return [
        check_citation(c, quoted_blocks(lines, c.line - 1), log, place)
        for c in find_citations(text, name, place)
    ]
