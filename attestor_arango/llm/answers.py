"""Reading a model's answer: the JSON object inside whatever text surrounds it.

Models wrap JSON in code fences or prose. The object is taken from the first ``{`` to the
last ``}``, found with two string scans: the pattern ``\\{.*\\}`` that did the same job
backtracks from every ``{`` and took ~1 s on an answer of 40,000 opening braces (quadratic
in the answer's length), a cost a misbehaving model endpoint could impose on every write.
"""

from __future__ import annotations


def json_object_text(answer: str) -> str | None:
    """The span from the first ``{`` to the last ``}`` after it, or None when there is none.

    The same span ``re.search(r"\\{.*\\}", answer, re.S)`` matches, in linear time.
    """
    start = answer.find("{")
    if start < 0:
        return None
    end = answer.rfind("}")
    return answer[start : end + 1] if end > start else None
