"""The vocabulary of the rule-based reader: states, jobs, diets, dates, change words.

Word lists and value classifiers only; the sentence frames that use them live in
``frames``.
"""

from __future__ import annotations

import re

STATUS_WORDS = (
    "active|inactive|up|down|online|offline|open|closed|enabled|disabled|available|unavailable|"
    "on|off|pending|approved|rejected|complete|completed|done|finished|cancelled|canceled|paused|"
    "running|stopped|broken|fixed|healthy|sick|ill|pregnant|retired|employed|unemployed|"
    "vegetarian|vegan|pescatarian|sober|allergic\\s+to\\s+\\w+|lactose\\s+intolerant|blocked|"
    "resolved|shipped|live|deprecated|archived|deployed|on\\s+leave|on\\s+vacation|in\\s+stock|"
    "out\\s+of\\s+stock|full[- ]time|part[- ]time|freelance|self[- ]employed"
)
JOB_NOUNS = frozenset(
    str.split(
        "engineer developer programmer teacher nurse doctor manager designer analyst scientist "
        "student lawyer accountant consultant writer chef architect researcher professor director "
        "officer pilot driver artist musician photographer journalist editor intern lead founder "
        "ceo cto cfo vp administrator technician therapist pharmacist dentist electrician plumber "
        "salesperson marketer recruiter librarian mechanic barista waiter waitress cashier"
    )
)
DIET_NOUNS = frozenset({"vegetarian", "vegan", "pescatarian", "carnivore"})
MY_KEYS = {
    "job": "job", "role": "job", "position": "job", "title": "job", "occupation": "job",
    "profession": "job", "city": "location", "home": "location", "hometown": "location",
    "address": "location", "location": "location", "employer": "employer",
    "company": "employer", "workplace": "employer", "partner": "partner",
    "boyfriend": "partner", "girlfriend": "partner", "wife": "partner", "husband": "partner",
    "spouse": "partner", "fiance": "partner", "fiancee": "partner",
}  # fmt: skip
CHANGED = frozenset(
    str.split("down up raised cut reduced increased dropped went rose fell grew lowered now")
)
NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a dozen"


WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
)
TIMEY = re.compile(
    r"^(?:(?:planned|scheduled|set|booked|due|expected|moved|pushed|rescheduled|postponed)\s+)?"
    r"(?:(?:for|on|at|in|to|by|until|till)\s+)?(?:the\s+)?(?:next\s+|this\s+|coming\s+)?"
    rf"(?:{WEEKDAY}|{MONTH}(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+\d{{4}})?|"
    rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}(?:\s+\d{{4}})?|"
    r"\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}|noon|midnight|"
    r"tomorrow|today|tonight|\d{4}-\d{2}-\d{2}|(?:19|20)\d{2})\b",
    re.I,
)


def is_time_value(value: str) -> bool:
    """Whether a value is a date or time ("next Wednesday", "at 9am", "June 2027")."""
    return bool(TIMEY.match(value.strip()))


STATE_WORDS = frozenset(
    str.split("active inactive valid invalid expired overdue paid unpaid free busy locked banned")
)


def status_value(value: str) -> str | None:
    """A one-word state ("suspended", "back up", "offline"), lower-cased; else None."""
    v = re.sub(r"^(?:back|now|again|still|currently)\s+", "", value.strip(), flags=re.I).lower()
    if re.fullmatch(rf"(?i:{STATUS_WORDS})", v):
        return v
    if re.fullmatch(r"[a-z]+", v) and (v in STATE_WORDS or (v.endswith("ed") and len(v) > 4)):
        return v
    return None


def reorder(phrase: str) -> str:
    """ "invoice from Globex" -> "Globex invoice", so both ways of naming it match."""
    m = re.match(
        r"^(\w+(?:\s\w+)?)\s+(?:of|from|for)\s+(?:(?:the|my|our)\s+)?(.+)$", phrase.strip(), re.I
    )
    return f"{m.group(2)} {m.group(1)}" if m else phrase.strip()


def thing(raw: str) -> str:
    """A thing without owner, article or a trailing "date": "our wedding date" -> "wedding"."""
    name = re.sub(r"^(?:my|our|the|his|her|their)\s+", "", raw.strip(), flags=re.I)
    return re.sub(r"\s+(?:date|time|day|schedule)$", "", reorder(name).lower())


STATE_VERBS = (
    "paid|cancelled|canceled|closed|opened|fixed|repaired|renewed|approved|rejected|shipped|"
    "deployed|archived|resolved|completed|finished|blocked|locked|unlocked|enabled|disabled|"
    "activated|deactivated|suspended|reactivated|restored|published|merged|released"
)
