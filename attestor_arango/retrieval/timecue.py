"""Temporal questions favour memories that say when something happened, or happened then.

A question asking *when* ("When did Jon go to the fair?", "What year did ...")
is answered by a statement that places the event in time: "Yesterday I went to
a fair", "I painted that last year", "we met in June". Matching the question's
words finds statements about the fair; among those, the one carrying a time
reference is the one a reader can date (relative references resolve against the
memory's own event time, ``valid_from``). So when the query asks when, each
candidate whose text carries a time reference gains ``time_cue_weight``.

What counts as a time reference, in English:
- a relative expression: yesterday, today, tonight, tomorrow, ago, recently,
  lately, weekend, a weekday, or last / next / this / past + a unit of time;
- a year (1900-2099) other than the year of the memory's own ``valid_from``;
- a month name other than the month of its own ``valid_from`` ("may" and
  "march" only next to a number, since they are common verbs).

A date equal to the memory's own timestamp adds nothing a reader does not have
already: memories that restate their own date (a transcript line stamped "(8 May
2023)") would otherwise all count alike.

Date match: a query that names a date ("on October 13, 2023", "13 October 2023",
"in July 2023", "in June", "in 2022") is about what happened then, so each
candidate whose event time (``valid_from``) falls in that day, month or year
gains ``date_match_weight``. A memory's text may not repeat its date; its event
time always holds it. The most specific form the query uses wins: a full date
is matched by day, a month with a year by month, a lone month or year alone.

Pure text and the memory's own fields: no clock, no store call, nothing outside
the candidate.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from datetime import datetime

from attestor_arango.memo import Memo
from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.rounding import round12
from attestor_arango.text.dates import MONTH_NAMES, WEEKDAYS

_UNIT = r"(?:week|weekend|month|year|night|morning|evening|summer|winter|spring|fall|autumn|time)"
_DAY = r"(?:" + "|".join(WEEKDAYS) + r")s?"
_RELATIVE = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|ago|recently|lately|weekends?|{_DAY}"
    rf"|(?:last|next|this|past) (?:{_UNIT}|{_DAY}))\b"
)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_MONTH = re.compile(r"\b(" + "|".join(MONTH_NAMES) + r")\b")
_AMBIGUOUS = frozenset({"may", "march"})  # also verbs: need a number beside them
_NUMBER_NEAR = re.compile(r"\d[^\w]*$|^[^\w]*\d")
# a "when" question: its four forms, each searched only when the text holds its words (a
# search that cannot match scans every place of the question: ~30,000 instructions for the
# four as one pattern); the answer is that pattern's (tests/test_query_cue_searches.py)
_WHEN_FIRST = re.compile(r"^\s*when\b")
_WHEN_AUX = re.compile(r"\bwhen (?:did|does|do|is|was|were|will|has|have|had)\b")
_WHAT_UNIT = re.compile(r"\b(?:what|which) (?:year|month|date|day|week|time)\b")
_HOW_LONG_AGO = re.compile(r"\bhow long ago\b")


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def asks_when(query: str) -> bool:
    """Whether the query asks for a time ("When did ...", "What year ...", "How long ago ...")."""
    q = _norm(query)
    if "when" in q and (_WHEN_FIRST.search(q) or _WHEN_AUX.search(q)):
        return True
    if ("what " in q or "which " in q) and _WHAT_UNIT.search(q):
        return True
    return "how long ago" in q and _HOW_LONG_AGO.search(q) is not None


def carries_time(text: str, year: int, month: int) -> bool:
    """Whether ``text`` refers to a time other than its own date (``year``, ``month``)."""
    norm = _norm(text)
    if _RELATIVE.search(norm):
        return True
    if any(int(y) != year for y in _YEAR.findall(norm)):
        return True
    for m in _MONTH.finditer(norm):
        name = m.group(1)
        if MONTH_NAMES.index(name) + 1 == month:
            continue
        if name in _AMBIGUOUS:
            before, after = norm[max(0, m.start() - 3) : m.start()], norm[m.end() : m.end() + 3]
            if not (_NUMBER_NEAR.search(before) or _NUMBER_NEAR.search(after)):
                continue
        return True
    return False


def _carries_key(key: tuple[str, datetime]) -> bool:
    text, when = key
    return carries_time(text, when.year, when.month)


# carries_time of (content, its valid_from's year and month), by (content, valid_from) (the
# datetime as it is: no year and month read a row, and a datetime keeps its hash): a "when"
# question runs the regexes over every candidate's text, and the same rows come back recall
# after recall (pure, so bounded)
_carries = Memo(_carries_key, 16_384)

_MONTH_RE = "(" + "|".join(MONTH_NAMES) + ")"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}}) {_MONTH_RE},? ((?:19|20)\d\d)\b")
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH_RE} (\d{{1,2}}),? ((?:19|20)\d\d)\b")
_MONTH_YEAR = re.compile(rf"\b{_MONTH_RE},? ((?:19|20)\d\d)\b")
_IN_MONTH = re.compile(rf"\b(?:in|during|of) {_MONTH_RE}\b")
_IN_YEAR = re.compile(r"\b(?:in|during|of) ((?:19|20)\d\d)\b")

# (year, month, day); None where the query leaves it open
DatePattern = tuple[int | None, int | None, int | None]


def _month(name: str) -> int:
    return MONTH_NAMES.index(name) + 1


def query_dates(query: str) -> list[DatePattern]:
    """The dates the query names, at the most specific form it uses."""
    q = _norm(query)
    # every form but a lone year names a month (as a word), and a year begins 19 or 20:
    # substring tests first, so that most questions (no month, no year) run no search
    if not any(map(q.__contains__, MONTH_NAMES)) or _MONTH.search(q) is None:
        if "19" not in q and "20" not in q:
            return []
        return [(int(m.group(1)), None, None) for m in _IN_YEAR.finditer(q)]
    out: list[DatePattern] = [
        (int(m.group(3)), _month(m.group(2)), int(m.group(1))) for m in _DAY_MONTH_YEAR.finditer(q)
    ]
    out += [
        (int(m.group(3)), _month(m.group(1)), int(m.group(2))) for m in _MONTH_DAY_YEAR.finditer(q)
    ]
    if not out:
        out = [(int(m.group(2)), _month(m.group(1)), None) for m in _MONTH_YEAR.finditer(q)]
    if not out:
        out = [(None, _month(m.group(1)), None) for m in _IN_MONTH.finditer(q)]
        out += [(int(m.group(1)), None, None) for m in _IN_YEAR.finditer(q)]
    return out


def _falls_in(year: int, month: int, day: int, pattern: DatePattern) -> bool:
    y, m, d = pattern
    return (y is None or y == year) and (m is None or m == month) and (d is None or d == day)


def apply_time_cue(
    cands: Sequence[Candidate], query: str, cue_weight: float, date_weight: float
) -> None:
    """Adds ``cue_weight`` to each candidate carrying a time reference when the query asks
    when, and ``date_weight`` to each whose event time falls in a date the query names.
    Sets ``time_cue`` only: the relevance is summed after it (``apply_decay_boost``)."""
    cue = cue_weight != 0.0 and asks_when(query)
    dates = query_dates(query) if date_weight != 0.0 else []
    if not cue and not dates:
        return
    # the memory's fields by key (candidates.py) and a known row's answer by the memo's own
    # lookup: a "when" question reads every candidate (~90), and pydantic's attribute hook
    # and the memo's call were most of that; the cue rounded as round(x, 12) is (round12:
    # bit for bit, without the decimal conversion). The relevance is summed after this step
    # (``apply_decay_boost``, pipeline.py), once for every candidate
    known = _carries.known
    for c in cands:
        fields = c.fields
        when = fields["valid_from"]
        bonus = 0.0
        if cue:
            key = (fields["content"], when)
            carries = known(key)
            if carries is None:
                carries = _carries(key)
            if carries:
                bonus += cue_weight
        if dates and any(_falls_in(when.year, when.month, when.day, p) for p in dates):
            bonus += date_weight
        if bonus:
            c.time_cue = round12(bonus)
