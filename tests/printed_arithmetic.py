"""Find and check every calculation a text prints: "a x b = c", "a + b + c = d", with
"/", "^", "e^x", "sqrt(n)" and brackets, and the slow-motion tables of `explore --word`.

A calculation holds if the shown factors, computed exactly (plain Python floats), give the
shown result at its printed precision: |value - c| <= half a unit of c's last decimal.
"""

import math
import re

# A run of characters that can only be arithmetic, ending in "= NUMBER".
# Atomic groups: a number is taken whole, so a long row of numbers cannot backtrack.
_CANDIDATE = re.compile(r"(?<![\w.])((?>sqrt\(|e\^|\d+(?:\.\d+)?|[()+/x^\-]| )+)= (\d+(?:\.\d+)?)"
                        r"(?![\d.]*[\w(])")
_TOKEN = re.compile(r"\s*(sqrt\(|e\^|\d+(?:\.\d+)?|[()+/x^\-])")


def tokens(text):  # "0.3 x 0.9 + 1" -> ["0.3", "x", "0.9", "+", "1"], or None if not arithmetic
    out, at = [], 0
    text = text.rstrip()
    while at < len(text):
        m = _TOKEN.match(text, at)
        if not m:
            return None
        out.append(m.group(1))
        at = m.end()
    return out


class _Parser:  # expr := term (("+" | "-") term)*; term := power (("x" | "/") power)*
    def __init__(self, toks):
        self.toks, self.i = toks, 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self):
        self.i += 1
        return self.toks[self.i - 1]

    def expr(self):
        value = self.term()
        while self.peek() in ("+", "-"):
            value = value + self.term() if self.take() == "+" else value - self.term()
        return value

    def term(self):
        value = self.power()
        while self.peek() in ("x", "/"):
            value = value * self.power() if self.take() == "x" else value / self.power()
        return value

    def power(self):
        value = self.atom()
        if self.peek() == "^":
            self.take()
            value = value ** self.atom()
        return value

    def atom(self):
        tok = self.take()
        if tok == "(":
            value = self.expr()
            if self.take() != ")":
                raise ValueError("unbalanced")
            return value
        if tok == "sqrt(":
            value = self.expr()
            if self.take() != ")":
                raise ValueError("unbalanced")
            return math.sqrt(value)
        if tok == "e^":
            return math.exp(self.atom())
        return float(tok)


def evaluate(toks):  # -> float, or None if the tokens are not one whole expression
    try:
        parser = _Parser(toks)
        value = parser.expr()
        return value if parser.i == len(toks) else None
    except (ValueError, IndexError, TypeError, ZeroDivisionError):
        return None


def plain(text):  # a page's typography -> the checker's: "√2 = 1.414" -> "sqrt(2) = 1.414"
    """The pages write × and √ where the terminal writes x and sqrt(...)."""
    text = re.sub(r"√\(", "sqrt(", text.replace("×", "x").replace("\u2212", "-"))
    return re.sub(r"√(\d+(?:\.\d+)?)", r"sqrt(\1)", text)


def calculations(text):  # -> [(shown expression, value, shown result)]
    """Every "expression = number" in `text` (lines joined, spaces collapsed), taking the
    longest tail of the candidate run that is one whole expression with an operator."""
    flat = " ".join(text.split())
    found = []
    for m in _CANDIDATE.finditer(flat):
        toks = tokens(m.group(1))
        if not toks:
            continue
        for start in range(len(toks)):
            tail = toks[start:]
            if any(t in ("x", "+", "-", "/", "^", "sqrt(", "e^") for t in tail):
                value = evaluate(tail)
                if value is not None:
                    found.append((" ".join(tail), value, m.group(2)))
                    break
    return found


def holds(value, shown):  # the value at the printed precision of `shown`
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    return abs(value - float(shown)) <= 0.5 * 10.0**-decimals + 1e-9


def table_rows(lines, title):  # the printed table under `title`: {word: [cells]} ({} if none)
    start = next((i for i, line in enumerate(lines) if line.startswith(title)), None)
    rows = {}
    for line in lines[start + 2:] if start is not None else []:
        if not line.startswith("    "):
            break
        word, *cells = line.split()
        rows[word] = cells
    return rows


def slow_motion_checks(text):
    """Each slow-motion table of `explore --word`: every cell is its row's printed weight
    times the printed X value (from the same output's X table; V's table for the wired head
    with --wv), and the last line is the exact sum of each column. [(what, value, shown)]."""
    lines = text.splitlines()
    printed = {"X": table_rows(lines, "  rows of X"),
               "V": table_rows(lines, "  wired head: values V")}
    checks = []
    for i, line in enumerate(lines):
        if not line.startswith("  slow motion, "):
            continue
        X = printed["V" if lines[i + 1].startswith("  each row of V") else "X"]
        rows, k = [], i + 3
        while lines[k].split()[1] == "x":
            weight, _, word, *cells = lines[k].split()
            for x, cell in zip(X[word], cells, strict=True):
                checks.append((f"{weight} x {x}", float(weight) * float(x), cell))
            rows.append(cells)
            k += 1
        total = lines[k].split()[-len(rows[0]):]
        for column, shown in zip(zip(*rows, strict=True), total, strict=True):
            exact = sum(float(c) for c in column)
            checks.append((" + ".join(column), exact, shown))
    return checks


# One word's blend printed row by row: "0.317 x river (0.9, 0.0, 0.3, 0.0) = (0.285, ...)", or
# numpy's "0.317 x river -> [0.285 0. 0.095 0.]" (the word's row is then the built-in table's).
_ROW_PRODUCT = re.compile(r"^\s*(\d+\.\d+) x (\w+)\s+"
                          r"(?:\(([^()]*)\) = \(([^()]*)\)|-> \[([^]]*)\])")
_ROW_SUM = re.compile(r"^\s*(?:sum of the rows|sum) (?:=|->) [(\[]([^])]*)[)\]]")


def _numbers(text):  # "0.285, 0.000" or "0.285 0.    0.095" -> ["0.285", "0.000"] / [..., "0."]
    return [n.rstrip(".") or "0" for n in re.split(r"[,\s]+", text.strip()) if n]


def row_blend_checks(text, table):
    """Each printed blend row: every product is the printed weight times the row's printed
    entry (or, in numpy's form, the word's row of `table`, {word: [numbers]}); a "sum" line
    right after the rows is each column's exact sum of the printed products.
    [(what, value, shown)]."""
    checks, rows = [], []
    for line in text.splitlines():
        m = _ROW_PRODUCT.match(line)
        if m:
            weight, word, x, shown_row, numpy_row = m.groups()
            xs = [float(v) for v in _numbers(x)] if x is not None else table[word]
            products = _numbers(shown_row if shown_row is not None else numpy_row)
            for a, p in zip(xs, products, strict=True):
                checks.append((f"{weight} x {a}", float(weight) * a, p))
            rows.append(products)
            continue
        m = _ROW_SUM.match(line)
        if m and rows:
            for column, total in zip(zip(*rows, strict=True), _numbers(m.group(1)), strict=True):
                checks.append((" + ".join(column), sum(float(c) for c in column), total))
        rows = []
    return checks
