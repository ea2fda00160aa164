"""Sentence frames: who (subject), what (attribute), which value, and polarity.

The rule-based reading of one clause. Attributes that can hold one value at a
time (where someone lives, their job, a status, a number with its unit, a
favourite) are ``single_valued``; a new value for them contradicts the old.
Multi-valued attributes (likes, uses, owns) only contradict on a flipped
polarity ("I love sushi" -> "I don't like sushi anymore") or an explicit
replacement ("we switched from MySQL to Postgres").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from attestor_arango.ingest.lexicon import (
    CHANGED,
    DIET_NOUNS,
    JOB_NOUNS,
    MY_KEYS,
    NUMBER_WORDS,
    STATE_VERBS,
    STATUS_WORDS,
    is_time_value,
    reorder,
    status_value,
    thing,
)
from attestor_arango.ingest.text import FILLERS, STOPWORDS, stem, value_key

_NW = (
    r"(?!(?:is|are|was|were|am|has|have|had|will|would|do|does|did|not|no|never|got|get|gets|"
    r"been|being)\b)[a-z]+"
)
_STARTERS = (
    r"(?:After|Before|These|This|That|Those|Lately|Since|When|While|Today|Yesterday|Then|Now|"
    r"So|But|And|Also|Actually|Recently|Currently|Finally|Still|Just|Well|Oh|Yes|No|Last|Next|"
    r"In|On|At|For|From|With|During|Because|If|Although|Though|Anyway|Sadly|Luckily|"
    r"Unfortunately|Fortunately|Honestly|Basically|Apparently|Nowadays|Meanwhile|There|It|"
    r"He|She|They|You|Here|What|Once|Soon|Later|Earlier|Ever|Every|Some|Many|Most|All|The|A|"
    r"An|My|Our|Your|His|Her|Their)\b"
)
_NAME = r"(?!I\b)[A-Z][\w'&.-]*"
_S = (
    rf"(?P<s>(?i:i|we)|(?i:my|our)\s+(?:{_NW}\s+){{0,3}}?{_NW}|"
    rf"(?!{_STARTERS}){_NAME}(?:\s+{_NAME}){{0,3}}|"
    rf"(?i:the)\s+{_NW}(?:\s+{_NW})??\s+(?i:of|from|for)\s+"
    rf"(?:(?i:the|my|our)\s+)?(?:{_NAME}(?:\s+{_NAME})*|{_NW}(?:\s+{_NW})??)|"
    rf"(?i:the)\s+{_NW}(?:\s+(?![a-z]+ed\b){_NW})?)"
)
_A = (
    r"(?:\s+(?i:now|currently|still|just|recently|finally|actually|also|officially|already|"
    r"really|then|both))*"
)
_AUX = (
    r"(?P<aux>(?:\s+(?i:am|is|are|have|has|had|will|would|was|were|be|been|got|get|gotten|"
    r"did|do|does))*)"
)
_NEG = r"(?P<neg>\s+(?i:do\s+not|does\s+not|did\s+not|no\s+longer|never|not|used\s+to))?"
_HEAD = rf"^{_S}{_A}{_AUX}{_NEG}{_A}\s+"

_DIET = re.compile(
    r"\b(?i:am|is|are|gone|went|became|become|turned|now|a)\s+(?:(?i:not|no\s+longer)\s+)?"
    r"(?:(?i:fully|completely|strictly|now)\s+)?(?P<diet>(?i:vegetarian|vegan|pescatarian|carnivore))\b"
)
_NUM = re.compile(
    rf"(?<![\w$€£])(?P<num>[$€£]?\d+(?:[.,]\d+)*(?:k|K|m|M)?%?|(?i:{NUMBER_WORDS})\b)"
    r"(?:\s+(?P<unit>[A-Za-z$€£%]+))?"
)
_CUT = re.compile(
    r"\s*(?:,(?!\d{3})|[;:()]|\s-\s|\b(?:and|but|because|since|so|which|who|where|when|while|although|"
    r"though|as|after|before|until|if|instead\s+of|rather\s+than)\b).*$",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Reading:
    subject: str
    attribute: str
    value: str
    single_valued: bool
    negated: bool = False
    relation: str | None = None
    replaces: str | None = None


def _clean(value: str) -> str:
    v = _CUT.sub("", value)
    v = FILLERS.sub(" ", v)
    v = re.sub(r"^(?:a|an|the)\s+", "", v.strip(), flags=re.I)
    return " ".join(v.split()).strip(" .!'\"")


def _subject(raw: str, label: str) -> str | None:
    low = raw.lower()
    if low in {"i", "we"}:
        return label
    m = re.match(r"(?:my|our)\s+(.+)$", raw, re.I)
    if m:
        return f"{label}'s {m.group(1).lower()}"
    m = re.match(r"the\s+(.+)$", raw, re.I)
    if m:
        return reorder(m.group(1))
    if low in {"he", "she", "they", "it", "this", "that", "there", "you", "he's", "she's"}:
        return None
    return raw


def _negated(m: re.Match[str], clause: str) -> bool:
    return bool(m.group("neg")) or bool(re.search(r"\b(?:anymore|any\s+more)\b", clause, re.I))


def _alt(*options: str) -> str:
    """A case-insensitive alternation of the given regex pieces."""
    return "(?i:" + "|".join(options) + ")"


_MOVE = _alt("moved", "relocated", "move", "moving", "relocating", "moves")
_LIVE = _alt("live", "lives", "living", "reside", "resides", "residing", "based", "stay", "stays")
_WORK = _alt("work", "works", "working", "employed")
_JOIN = _alt(
    "joined", "join", "joining", r"started\s+(?:working\s+)?at",
    r"(?:started|got|took|landed)\s+a\s+(?:new\s+)?job\s+(?:at|with)",
    r"(?:was|got)\s+hired\s+(?:by|at)", r"accepted\s+an?\s+(?:offer|position|job)\s+(?:at|from)",
)  # fmt: skip
_SWITCH = _alt("switched", "migrated", "changed", "transitioned", "converted", "upgraded")
_USE = _alt("use", "uses", "using", r"rely\s+on", r"relies\s+on", r"relying\s+on")
_LIKE = _alt("love", "loves", "like", "likes", "enjoy", "enjoys", "adore", "adores", r"am\s+into")
_DISLIKE = _alt("hate", "hates", "dislike", "dislikes", "detest", "detests", r"can\s*not\s+stand")
_INTENT = _alt(
    "plan", "plans", "planning", "intend", "intends", "intending", "want", "wants", "hope",
    "hopes", "hoping", "going", "decided", "aim", "aiming", r"thinking\s+(?:of|about)",
)  # fmt: skip
_REL = _alt(
    "married", "single", "engaged", "divorced", "widowed", "separated",
    r"in\s+a\s+relationship", "dating",
)  # fmt: skip
_BREAK = _alt(r"broke\s+up\s+with", r"split\s+up\s+with", r"separated\s+from")
_STOP = _alt("quit", "stopped", r"gave\s+up", r"give\s+up", r"cut\s+out")
_START = _alt("started", "began", r"took\s+up", r"picked\s+up", "start")
_OWN = _alt("have", "has", "own", "owns", "bought", "adopted")

_RESCHEDULE = _alt(
    "moved", "pushed", "rescheduled", "postponed", "changed", "shifted", "delayed", "brought",
    "bumped", "set", "extended", "renewed", "prolonged",
)  # fmt: skip
_WHEN = _alt(
    "ends", "end", "starts", "start", "begins", "begin", "expires", "expire", "finishes",
    "closes", "opens", "leaves", "leave", "departs", "arrives", "lands", "happens", "falls",
)  # fmt: skip
_FRAMES: list[tuple[str, str, bool, str | None]] = [
    # (verb pattern, attribute, single-valued, relation); order matters: first match wins
    (rf"{_RESCHEDULE}\s+(?P<obj>(?i:the|our|my)\s+[a-z]+(?:\s+[a-z]+)?\s+)?(?i:back\s+|forward\s+)?"
     r"(?i:to|until|till|for|through)\s+(?P<when>)", "when", True, None),
    (rf"{_WHEN}\s+(?P<when2>)", "when", True, None),
    (rf"{_MOVE}\s+(?i:back\s+)?(?:(?i:from)\s+(?P<old>.+?)\s+)?(?i:to|into)\s+", "location", True,
     "lives_in"),
    (rf"{_LIVE}\s+(?i:in|at|near)\s+", "location", True, "lives_in"),
    (rf"{_WORK}\s+(?i:as)\s+", "job", True, None),
    (rf"{_WORK}\s+(?i:at|for|with)\s+", "employer", True, "works_at"),
    (rf"{_JOIN}\s+", "employer", True, "works_at"),
    (rf"{_SWITCH}\s+(?i:over\s+)?(?i:from)\s+(?P<old>.+?)\s+(?i:to)\s+", "uses", False, "uses"),
    (rf"{_USE}\s+", "uses", False, "uses"),
    (r"(?i:prefer|prefers|preferring)\s+", "prefers", False, "prefers"),
    (rf"{_LIKE}\s+", "likes", False, "likes"),
    (rf"(?P<dis>{_DISLIKE})\s+", "likes", False, None),
    (rf"{_INTENT}\s+(?P<neg2>(?i:not\s+))?(?i:to\s+)?", "intent", True, None),
    (rf"(?P<st>{_REL})\b\s*(?:(?i:to|with)\s+)?", "relationship_status", True, None),
    (rf"(?P<brk>{_BREAK})\s+", "relationship_status", True, None),
    (r"(?P<st>" + STATUS_WORDS + r"|[a-z]{3,}ed)\b\s*", "status", True, None),
    (rf"(?P<sv>(?i:{STATE_VERBS}))\s+(?P<obj>(?i:the|my|our)\s+.+?)(?:\s+(?P<pt>(?i:on|off)))?$",
     "status", True, None),
    (r"(?i:turned|switched)\s+(?P<obj2>(?i:the|my|our)\s+.+?)\s+(?P<pt2>(?i:on|off))$", "status",
     True, None),
    (rf"{_STOP}\s+(?P<stop>)", "does", False, None),
    (rf"{_START}\s+(?P<start>)", "does", False, None),
    (rf"{_OWN}\s+", "owns", False, "owns"),
    (r"(?P<isa>(?i:an?))\s+", "is_a", False, None),
]  # fmt: skip
_COMPILED = [(re.compile(_HEAD + verb + r"(?P<v>.*)$"), a, s, r) for verb, a, s, r in _FRAMES]
_MY_IS = re.compile(
    r"^(?P<poss>(?i:my|our)|[A-Z][\w]*'s)\s+(?:(?i:new|current|old|former|previous|latest|main)\s+)?"
    r"(?P<x>(?:[a-z]+\s+){0,2}?[a-z]+)\s+(?i:is|are|was|=)(?P<neg>\s+(?i:not|no\s+longer))?\s+(?P<v>.+)$"
)
_AUTHORED = re.compile(
    r"^(?P<work>.+?)\s+(?i:was|is|were)\s+(?i:written|authored|created|developed|made|built|"
    r"designed|maintained)\s+(?i:by)\s+(?P<author>.+)$"
)
_VERB = re.compile(_HEAD + r"(?P<verb>[a-z]+)\b\s*(?P<v>.*)$")
_COPULA = re.compile(rf"^{_S}\s+(?i:is|are|was|were)(?P<neg>\s+(?i:not|no\s+longer))?\s+(?P<v>.+)$")


def read_clause(clause: str, label: str) -> Reading | None:
    """The structured reading of one clause, or None when no frame fits."""
    clause = clause.strip().rstrip(".!")
    m = _MY_IS.match(clause)
    if m and not re.match(r"\w+ing\b", m.group("v")) and "'s" not in m.group("x"):
        owner = label if m.group("poss").lower() in {"my", "our"} else m.group("poss")[:-2]
        x = m.group("x").lower()
        words = x.split()
        if words[0] in {"favorite", "favourite"} and len(words) > 1:
            attribute, relation = "favorite_" + "_".join(words[1:]), "prefers"
        else:
            attribute, relation = MY_KEYS.get(x, "_".join(words)), None
        value = _clean(m.group("v"))
        if value:
            neg = bool(m.group("neg"))
            if is_time_value(value):
                return Reading(thing(x), "when", value, True, neg)
            if re.fullmatch(_REL, value):
                return Reading(f"{owner}'s {x}", "relationship_status", value.lower(), True, neg)
            if status_value(value):
                return Reading(f"{owner}'s {x}", "status", status_value(value) or "", True, neg)
            return Reading(owner, attribute, value, True, neg, relation)
    m = _AUTHORED.match(clause)
    if m:
        return Reading(_clean(m.group("work")), "authored_by", _clean(m.group("author")), True,
                       relation="authored_by")  # fmt: skip
    num = _numeric(clause, label)
    if num is not None:
        return num
    diet = _DIET.search(clause)
    opening = re.match(_HEAD, clause)
    if diet and opening and _subject(opening.group("s"), label) == label:
        return Reading(label, "diet", diet.group("diet").lower(), True, _negated(opening, clause))
    for pattern, attribute, single, relation in _COMPILED:
        m = pattern.match(clause)
        if not m:
            continue
        subject = _subject(m.group("s"), label)
        if subject is None:
            return None
        groups = m.groupdict()
        neg = _negated(m, clause)
        raw = m.group("v")
        if groups.get("when") is not None or groups.get("when2") is not None:
            value = _clean(raw)
            if not is_time_value(value):
                continue
            owner = groups.get("obj") or m.group("s")
            what = label if owner.lower() in {"i", "we"} else thing(owner)
            return Reading(what, "when", value, True, neg)
        if groups.get("isa") is not None and not re.search(
            r"(?i:\b(?:am|is|are)\b)", m.group("aux")
        ):
            continue
        if groups.get("st") is not None:
            aux = m.group("aux")
            if attribute == "status" and not re.search(r"(?i:\b(?:am|is|are|was|got)\b)", aux):
                continue
            status = " ".join(groups["st"].lower().split())
            if attribute == "status" and (status_value(status) is None or _clean(raw)):
                continue  # "-ed" words only as a whole state: "got suspended", not "got moved to"
            if (
                attribute == "status"
                and subject == label
                and not re.fullmatch(rf"(?i:{STATUS_WORDS})", status)
            ):
                continue  # "I am excited": a feeling of the moment, not a state to track
            partner = _clean(raw) if attribute != "status" else ""
            if partner:
                joiner = (
                    "" if status == "dating" else (" with" if "relationship" in status else " to")
                )
                status = f"{status}{joiner} {partner}"
            return Reading(subject, attribute, status, True, neg, "knows" if partner else None)
        if groups.get("sv") is not None or groups.get("obj2") is not None:
            if m.group("s").lower() not in {"i", "we"}:
                continue
            obj = groups.get("obj") or groups.get("obj2") or ""
            state = (groups.get("pt") or groups.get("pt2") or groups.get("sv") or "").lower()
            return Reading(thing(obj), "status", state, True, neg)
        if groups.get("brk") is not None:
            return Reading(subject, attribute, "single", True, neg, replaces=_clean(raw))
        value = _clean(raw)
        if not value:
            continue
        if groups.get("stop") is not None or groups.get("start") is not None:
            first, _, rest = value.partition(" ")
            neg = neg or groups.get("stop") is not None
            return Reading(subject, f"does:{stem(first)}", rest or first, False, neg)
        if groups.get("dis") is not None:
            neg = True
        if attribute == "is_a":
            head = stem(value.split()[-1])
            if any(stem(j) == head for j in JOB_NOUNS):
                return Reading(subject, "job", value, True, neg)
            if value.lower() in DIET_NOUNS:
                return Reading(subject, "diet", value.lower(), True, neg)
            agent = value.lower()
            if re.fullmatch(r"[a-z]{4,}er", agent):  # "a smoker": someone who smokes
                verb = stem(agent[:-1])
                return Reading(subject, f"does:{verb}", verb, False, neg)
            return Reading(subject, f"is_a:{value_key(value)}", value, False, neg)
        if attribute == "intent":
            neg = neg or bool(groups.get("neg2"))
            return Reading(subject, f"intent:{stem(value.split()[0])}", value, True, neg)
        if attribute in {"likes", "owns", "uses"} and not groups.get("old"):
            return Reading(subject, f"{attribute}:{value_key(value)}", value, False, neg, relation)
        old = groups.get("old")
        return Reading(subject, attribute, value, single, neg, relation,
                       _clean(old) if old else None)  # fmt: skip
    return _generic(clause, label)


def _numeric(clause: str, label: str) -> Reading | None:
    head = re.match(_HEAD, clause)
    if not head:
        return None
    subject = _subject(head.group("s"), label)
    rest = clause[head.end() :]
    for m in _NUM.finditer(rest):
        num, unit = m.group("num"), (m.group("unit") or "")
        if re.fullmatch(r"(?:19|20)\d\d", num):
            continue  # a year is a time, not a quantity
        if not unit and not num.startswith(("$", "€", "£")) and not num.endswith("%"):
            continue
        if unit.lower() in STOPWORDS and unit.lower() not in {"am"}:
            unit = ""
        if num.isalpha() and not unit:
            continue
        before = rest[: m.start()].split()
        verb = before[0].lower() if before else ""
        if not verb or verb in {"a", "an", "about", "around", "over", "under", "almost", "exactly"}:
            verb = "be" if re.search(r"(?i:\b(?:am|is|are|was)\b)", head.group("aux")) else "have"
        verb = {"own": "have", "has": "have", "owns": "have", "got": "have"}.get(verb, verb)
        if verb in CHANGED:
            verb = "*"  # "down to 76 kilograms": the quantity changed, whatever its verb was
            owned = re.match(r"^\w+\s+(my|our)\s+([a-z]+(?:\s+[a-z]+)?)\s+(?:to|by)$",
                             rest[: m.start()].strip(), re.I)  # fmt: skip
            if owned:  # "The landlord raised my rent to $1650": a fact about my rent
                value = f"{num} {unit}".strip()
                return Reading(label, "_".join(owned.group(2).lower().split()), value, True)
        if subject is None:
            return None
        value = f"{num} {unit}".strip()
        key = stem(unit.lower()) if unit and unit[0].isalpha() else (unit or num[0])
        verb = verb if verb == "*" else stem(verb)
        return Reading(subject, f"num:{verb}:{key}", value, True, _negated(head, clause))
    return None


def _generic(clause: str, label: str) -> Reading | None:
    m = _COPULA.match(clause)
    if m:
        subject = _subject(m.group("s"), label)
        value = _clean(m.group("v"))
        if subject and value:
            if is_time_value(value):
                return Reading(thing(m.group("s")), "when", value, True, bool(m.group("neg")))
            state = status_value(value)
            listed = re.fullmatch(rf"(?i:{STATUS_WORDS})", state or "")
            if state and (subject != label or listed):
                return Reading(subject, "status", state, True, bool(m.group("neg")))
            return Reading(subject, f"is:{value_key(value)}", value, False, bool(m.group("neg")))
    m = _VERB.match(clause)
    if m and m.group("s").lower() in {"i", "we"}:
        verb = m.group("verb").lower()
        if verb in STOPWORDS:
            return None
        value = _clean(m.group("v"))
        return Reading(label, f"does:{stem(verb)}", value or verb, False, _negated(m, clause))
    return None
