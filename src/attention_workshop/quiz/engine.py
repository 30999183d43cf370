"""A quiz question, and the rule that decides whether a typed answer is right.

Numbers: an answer is right if it rounds to the true value at the precision the
learner typed (at least one decimal counts), or if, typed with at least the
lesson's decimals, it is within one unit of the lesson's printed value in its
last decimal (hand arithmetic on rounded numbers drifts by one).
Example, true value 0.49771 printed as 0.498: "0.5", "0.498", "0.497", "0.499" and
"49.8%" are right; "0.49", "0.4" and "0.496" are wrong.
Choices: a letter, "b", "B", "(b)" or "b)".
"""

import re
from dataclasses import dataclass

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)%?")
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
        if self.choices:
            return f"a letter, a-{chr(ord('a') + len(self.choices) - 1)}"
        return f"a number, e.g. {self.answer:.1f} or {self.answer:.{self.decimals}f}"


def choice(prompt, options, correct, explanation):  # correct: index into options -> Question
    """Example: choice("2 + 2?", ["3", "4"], 1, "...").answer -> 'b'."""
    return Question(prompt, "abcdefgh"[correct], explanation, tuple(options))


def read_answer(question, text):  # -> float | str, or ValueError naming what is expected
    """Check the form only. Example: number question, " 49.8% " -> "49.8%"; choice, "(B)" -> "b"."""
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


def is_right(question, value):  # value from read_answer -> bool
    """Example: for a true 0.49771 printed as 0.498: "0.5", "0.499" -> True; "0.49" -> False."""
    if question.choices:
        return value == question.answer
    typed, decimals = _number(value)
    if abs(typed - question.answer) <= 0.5 * 10.0**-max(decimals, 1) + 1e-12:
        return True
    printed = round(question.answer, question.decimals)
    unit = 10.0**-question.decimals
    return (question.decimals >= 1 and decimals >= question.decimals  # whole numbers: exact
            and abs(typed - printed) <= unit + 1e-12)


def _number(text):  # "49.8%" -> (0.498, 3); "0.5" -> (0.5, 1)
    percent = text.endswith("%")
    digits = text.rstrip("%")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    value = float(digits)
    return (value / 100, decimals + 2) if percent else (value, decimals)
