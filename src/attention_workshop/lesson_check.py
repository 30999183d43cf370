"""Check a lesson's cross-checks against results.log: find citations, their quoted blocks, compare.

A lesson is a text or markdown file, or a Jupyter notebook read as text by
`lesson_notebook.notebook_text`.

A citation reads "cross-check: results.log line 28", "lines 29-34" or "lines 46 and 72"
(absolute: the lessons cite Modules 0-2 so, lines 1-80, which never move), or relative to a
section: "results.log [S11] line 3", "[S11] lines 2-4", "[S11] lines 2 and 5", where line 1
is the line `[S11] ...` at column 0 of the log being checked (report.section_spans). A
module inserted before section 11 moves no line of it.
The quoted block is what follows the citation's paragraph: indented paragraphs,
paragraphs headed `[Sn]` at column 0, or ``` fenced blocks, up to the next prose
paragraph. Several may follow (a code listing, then the log lines); the block
checked is the one that stands in the log, contiguous, inside the cited lines.

Example: citation "lines 29-30", log lines 29-30 = ["  a", "  b"], quoted block
["  b"] -> ok (it stands at line 30); quoted block ["  c"] -> fails at line 29. In the log
["[S1] x", "  a", "[S2] y", "  b"], "[S2] line 2" is log line 4, "  b".
"""

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from attention_workshop.reading import printable, refuse
from attention_workshop.report import SECTION_HEAD, section_spans

LAST_LINE = 99_999  # results.log has under 200 lines; a bigger number is a typo (and a huge
#                     range); a section numbered past it is one too
# log lines all of a lesson's citations may cite together (the seeds cite ~130): checking
# costs time in proportion, and 100,000 citations of lines 1-99999 fit in a 4 MB lesson
MAX_CITED = 1_000_000
CITATION = re.compile(
    r"cross-check:\s+results\.log\s+"
    r"(?:\[S(?P<s>\d+)\]\s+)?"  # relative to that section, if given
    r"(?:lines?\s+(?P<a>\d+)(?:\s*(?P<sep>[-\u2013]|and)\s*(?P<b>\d+))?)"
)
FENCE = "```"


@dataclass(frozen=True)
class Citation:
    line: int  # 1-based line of the lesson where "cross-check" stands
    label: str  # as shown in reports: "line 28", "lines 29-34", "[S11] lines 2 and 5"
    cited: tuple  # the line numbers cited, in order: (29, 30, ..., 34) or (46, 72); in the
    #               section's count when `section` is given ([S11] line 1 is its header)
    section: int | None = None  # the section the lines count in; None: the log's own count


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
    citations, line, counted, total = [], 1, 0, 0
    for m in CITATION.finditer(text):
        line += text.count("\n", counted, m.start())  # from the last citation on: linear
        counted = m.start()
        wrong = _impossible(m["a"], m["b"], m["sep"], m["s"])
        if wrong:
            label = printable(_label(m["a"], m["b"], m["sep"], m["s"]), 60)
            where = place(line) if place else f"line {line}"
            raise refuse("lesson", name, f"{where}: 'results.log {label}' {wrong}",
                         "cite log lines that exist, e.g. 'results.log lines 29-34' or "
                         "'results.log [S7] lines 2-5'")
        a, b = _number(m["a"]), _number(m["b"]) if m["b"] else None
        section = _number(m["s"]) if m["s"] else None
        many = b is not None and m["sep"] != "and"
        total += b - a + 1 if many else 1 if b is None else 2
        if total > MAX_CITED:  # counted before any tuple of lines is made
            where = place(line) if place else f"line {line}"
            raise refuse("lesson", name, f"{where}: its citations cite more than {MAX_CITED} "
                         "log lines in all", "cite fewer lines, or split the lesson")
        cited = tuple(range(a, b + 1)) if many else (a,) if b is None else (a, b)
        citations.append(Citation(line, _label(a, b, m["sep"], section), cited, section))
    return citations


def _label(a, b, sep, section=None):
    """Example: (29, 34, "-") -> "lines 29-34"; (46, 72, "and", 11) -> "[S11] lines 46 and 72"."""
    where = "" if section is None else f"[S{section}] "
    if b is None:
        return f"{where}line {a}"
    return f"{where}lines {a} and {b}" if sep == "and" else f"{where}lines {a}-{b}"


def _number(digits):  # "0028" -> 28; leading zeros never reach int() (its 4300-digit limit)
    return int(digits.lstrip("0") or "0")


def _impossible(a, b, sep, section=None):  # the digits as written -> why it cannot hold, or None
    """Example: ("1", "0", "and") -> "cites line 0, but log lines count from 1";
    ("2", None, None, "9" * 6) -> "names a section past [S99999], which no results.log has"."""
    if section is not None and (len(section.lstrip("0")) > len(str(LAST_LINE))
                                or _number(section) > LAST_LINE):
        return f"names a section past [S{LAST_LINE}], which no results.log has"
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
    return _blocks_from(lines, paragraph_ends(lines[after + 1:])[0] + after + 1)


def paragraph_ends(lines):  # -> [index]: from line i, the first line that is blank or quoted
    """One pass from the end, so that 40,000 citations in one paragraph do not each walk it.
    Example: ["a", "b", "", "  c"] -> [2, 2, 2, 3, 4]."""
    ends = [len(lines)] * (len(lines) + 1)
    for i in range(len(lines) - 1, -1, -1):
        quoted_or_blank = not lines[i].strip() or _is_quoted(lines[i])
        ends[i] = i if quoted_or_blank else ends[i + 1]
    return ends


def _blocks_from(lines, i):  # the blocks from 0-based line i up to the next prose paragraph
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


def _find(block, lines):  # -> [0-based starts of `block` in `lines`], in order
    """Knuth-Morris-Pratt over whole lines: time linear in len(block) + len(lines), however
    alike the lines are. Example: (("a", "b"), ["a", "a", "b", "a", "b"]) -> [1, 3]."""
    fail, k = [0] * len(block), 0  # fail[j]: the longest border of block[:j + 1]
    for j in range(1, len(block)):
        while k and block[j] != block[k]:
            k = fail[k - 1]
        k += block[j] == block[k]
        fail[j] = k
    starts, k = [], 0
    for i, line in enumerate(lines):
        while k and line != block[k]:
            k = fail[k - 1]
        k += line == block[k]
        if k == len(block):
            starts.append(i - k + 1)
            k = fail[k - 1]
    return starts


MAX_SCORED = 20_000  # line pairs compared for similarity when no alignment holds


def _alignment(block, cited, o):  # lay `block` along the cited lines from cited[o]
    """[(lesson text, log line or None)]: None past the cited lines."""
    return [(text, cited[o + k] if o + k < len(cited) else None)
            for k, text in enumerate(block.lines)]


def _best_offset(block, cited, shown):  # -> (key, offset): the alignment closest to the log
    """Most lines equal first, then the highest summed similarity, the earliest on a tie.
    The equal lines of every offset are counted at once (numpy, one pass per block line);
    similarity is measured only on the offsets with the most equal lines, at most
    MAX_SCORED line pairs (a 300-line block in a 99,999-line range ties everywhere)."""
    import numpy as np

    n_offsets = max(1, len(cited) - len(block.lines) + 1)
    at = {}  # log text -> its positions in `shown`
    for p, text in enumerate(shown):
        at.setdefault(text, []).append(p)
    equal = np.zeros(n_offsets, np.int64)
    for k, text in enumerate(block.lines):
        offsets = np.asarray(at.get(text, ()), np.int64) - k
        equal += np.bincount(offsets[(offsets >= 0) & (offsets < n_offsets)],
                             minlength=n_offsets)
    tied = np.flatnonzero(equal == equal.max())
    best = None
    for o in tied[: max(1, MAX_SCORED // len(block.lines))].tolist():
        similar = sum(SequenceMatcher(None, text, shown[o + k]).ratio()
                      for k, text in enumerate(block.lines) if o + k < len(shown))
        if best is None or similar > best[0][1]:
            best = ((int(equal[o]), similar), o)
    return best


def _lesson_line(n):
    return f"lesson line {n}"


def _first_difference(block, pairs, log, place=_lesson_line, log_line="log line {}".format):
    for k, (text, n) in enumerate(pairs):
        where = place(block.start + k)
        if n is None:
            return f"{where} {text!r} lies past the cited lines"
        if text != log[n - 1]:
            return f"{where} expected {text!r}, {log_line(n)} has {log[n - 1]!r}"
    return None


def section_lines(citation, spans):  # -> (the log lines it cites, None) or (None, why not)
    """A section citation's lines counted in the log, its section's header being line 1.
    `spans`: report.section_spans(log). Example: "[S2] lines 1-2" with spans {2: [(5, 9)]}
    -> ((5, 6), None); "[S2] line 6" -> (None, "[S2] line 6 is past the section's end ...")."""
    name = f"[S{citation.section}]"
    found = spans.get(citation.section, ())
    if not found:
        return None, f"the log has no section {name} (no line starts with '{name}')"
    if len(found) > 1:
        return None, (f"{name} heads more than one section of the log (lines {found[0][0]} "
                      f"and {found[1][0]}): its lines are ambiguous")
    (first, last), biggest = found[0], max(citation.cited)
    if biggest > last - first + 1:
        return None, (f"{name} line {biggest} is past the section's end ({name} is log lines "
                      f"{first}-{last}, {last - first + 1} lines)")
    return tuple(first - 1 + n for n in citation.cited), None


def check_citation(citation, blocks, log, place=None, spans=None):
    """Does one of `blocks` stand in `log` (a list of lines), contiguous, inside the cited lines?
    `place(n)` names the lesson's line n in a report ("cell 5, line 3"); by default "lesson
    line n". `spans` (report.section_spans(log), made here when not given) places a section
    citation. Time: linear in the cited lines and the blocks' size (`_find`, `_best_offset`)."""
    place = place or _lesson_line
    cited, log_line, section = citation.cited, "log line {}".format, None
    if citation.section is not None:
        spans = section_spans(log) if spans is None else spans
        cited, why = section_lines(citation, spans)
        if why:
            return Result(citation, False, why)
        section = (f"[S{citation.section}]", *spans[citation.section][0])  # name, first, last

        def log_line(n):  # 137 -> "log line 137 ([S11] line 3)"
            return f"log line {n} ({section[0]} line {n - section[1] + 1})"
    past = [n for n in cited if n > len(log)]
    if past:
        return Result(citation, False, f"line {past[0]} is past the end of the log "
                                       f"({len(log)} lines)")
    if not blocks:
        return Result(citation, True, "ok (no quoted block; the lines exist)")
    shown = [log[n - 1] for n in cited]  # the cited lines, in the citation's order
    if any(len(b.lines) <= len(shown) and _find(b.lines, shown) for b in blocks):
        return Result(citation, True, "ok")
    best = None
    for block in blocks:
        key, o = _best_offset(block, cited, shown)
        if best is None or key > best[0]:
            best = (key, block, o)
    _, block, o = best
    detail = _first_difference(block, _alignment(block, cited, o), log, place, log_line)
    found = _find(block.lines, log)
    if found:
        a, b = found[0] + 1, found[0] + len(block.lines)
        detail += f" (the block stands at log lines {a}-{b}"
        if section and section[1] <= a and b <= section[2]:
            detail += f": {section[0]} lines {a - section[1] + 1}-{b - section[1] + 1}"
        detail += ")"
    return Result(citation, False, detail)


def check_text(text, log, name="lesson", place=None):
    """Check every citation in a lesson's `text` against `log` (a list of lines). The log's
    sections are found once, when a citation counts in one."""
    lines = text.splitlines()
    ends, blocks = paragraph_ends(lines), {}  # blocks: the same region is cut once
    citations = find_citations(text, name, place)
    spans = section_spans(log) if any(c.section is not None for c in citations) else None
    results = []
    for c in citations:
        i = ends[min(c.line, len(lines))]  # after the rest of the citation's paragraph
        if i not in blocks:
            blocks[i] = _blocks_from(lines, i)
        results.append(check_citation(c, blocks[i], log, place, spans))
    return results
