"""A quiz question, and the rule that decides whether a typed answer is right.

Numbers: an answer is right if, typed with at least the lesson's decimals, it rounds at
the lesson's precision to the printed value or to one unit either side (hand arithmetic
on rounded numbers drifts by one); fewer decimals are right only when they are the
printed value exactly (0.4 for 0.40). A coarser answer that rounds the true value
correctly is "close": not counted, and the learner is asked for the lesson's decimals.
Example, true value 0.49771 printed as 0.498: "0.498", "0.4977", "0.497", "0.499" and
"49.8%" are right; "0.5" and "50%" are close; "0.49", "0.4" and "0.496" are wrong.
A whole part may be grouped by commas in threes, as the log prints it: "46,080" is 46080.
Choices: a letter, "b", "B", "(b)" or "b)".
"""

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

# digits, or digits grouped by commas in threes as the log prints them ("46,080"; "0,5" is not)
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|[1-9]\d{0,2}(,\d{3})+(\.\d*)?|\.\d+)%?")
_LETTER = re.compile(r"\(?([a-zA-Z])[).]?")


@dataclass(frozen=True)
class Question:
    """One question; `answer` is a number the code computed, or the letter of the right choice."""

    prompt: str
    answer: float | str
    explanation: str
    choices: tuple = ()  # texts of choices a), b), ...; empty for a number
    decimals: int = 3  # how the lesson prints the number

    @property
    def shown_answer(self):
        """Example: '0.498', or 'b) the word itself'."""
        if self.choices:
            return f"{self.answer}) {self.choices[ord(self.answer) - ord('a')]}"
        return f"{self.answer:.{self.decimals}f}"

    @property
    def hint(self):
        """Example: 'a letter, a-c', or 'a number to three decimals, e.g. 0.250 or 25.0%'."""
        if self.choices:
            return f"a letter, a-{chr(ord('a') + len(self.choices) - 1)}"
        if not self.decimals:
            return "a whole number, e.g. 12"
        example = f"{0.25:.{self.decimals}f}"
        percent = f" or {25:.{self.decimals - 2}f}%" if self.decimals > 2 else ""
        return f"a number to {precision(self.decimals)}, e.g. {example}{percent}"


def precision(decimals):
    """Example: precision(3) -> 'three decimals'; precision(1) -> 'one decimal'."""
    words = ("no decimals", "one decimal", "two decimals", "three decimals", "four decimals")
    return words[decimals] if decimals < len(words) else f"{decimals} decimals"


def choice(prompt, options, correct, explanation):  # correct: index into options -> Question
    """Example: choice("2 + 2?", ["3", "4"], 1, "...").answer -> 'b'."""
    return Question(prompt, "abcdefgh"[correct], explanation, tuple(options))


def read_answer(question, text):  # -> float | str, or ValueError naming what is expected
    """Check the form only. Example: number question, " 49.8% " -> "49.8%", "46,080" ->
    "46,080"; choice, "(B)" -> "b"."""
    text = text.strip()
    if question.choices:
        m = _LETTER.fullmatch(text)
        letters = "abcdefgh"[: len(question.choices)]
        if not m or m.group(1).lower() not in letters:
            raise ValueError(f"answer with {question.hint}")
        return m.group(1).lower()
    if not _NUMBER.fullmatch(text):
        raise ValueError(f"answer with {question.hint}")
    return text


def grade(question, value):  # value from read_answer -> "right" | "close" | "wrong"
    """Example: for a true 0.49771 printed as 0.498: "0.498", "0.499" -> right; "0.5" -> close
    (rounds the true value correctly, but coarser than the lesson prints); "0.49" -> wrong."""
    if question.choices:
        return "right" if value == question.answer else "wrong"
    typed, decimals = _number(value)
    printed = Decimal(f"{question.answer:.{question.decimals}f}")
    if typed == printed:  # 0.4 for 0.40, 72 for 72: the printed number itself
        return "right"
    if decimals >= question.decimals and question.decimals >= 1:  # whole numbers: exact
        unit = Decimal(1).scaleb(-question.decimals)
        if abs(typed.quantize(unit, ROUND_HALF_UP) - printed) <= unit:
            return "right"
    coarse = Decimal(1).scaleb(-decimals) / 2
    if 1 <= decimals < question.decimals and abs(typed - Decimal(question.answer)) <= coarse:
        return "close"
    return "wrong"


def is_right(question, value):  # value from read_answer -> bool
    return grade(question, value) == "right"


def _number(text):  # "49.8%" -> (Decimal("0.498"), 3); "0.5" -> (Decimal("0.5"), 1)
    percent = text.endswith("%")
    digits = text.rstrip("%").replace(",", "")  # "46,080" -> "46080" (read_answer checked it)
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    value = Decimal(digits)  # exact: the decimals typed are the decimals graded
    return (value.scaleb(-2), decimals + 2) if percent else (value, decimals)
