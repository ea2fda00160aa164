"""Speaker-locked fact extraction: rule-based (offline default) and LLM-backed.

Each extractor sees ONE speaker's text only, so a fact can never be attributed
across speakers by construction. The user extractor keeps what the user asserts
about themselves or the world; the assistant extractor keeps what the assistant
introduced and drops anything addressed to or restating the user ("you live in
Paris" is the user's fact, not the assistant's). Time expressions resolve
against the speaker's own timestamp.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any, Protocol

from attestor_arango.clock import OPEN, iso
from attestor_arango.ingest.frames import Reading, read_clause
from attestor_arango.ingest.lexicon import MY_KEYS
from attestor_arango.ingest.model import Fact, Speaker
from attestor_arango.ingest.text import content_stems, expand, names, sentences, value_key
from attestor_arango.ingest.timeexpr import TimeSpan, find_time
from attestor_arango.llm import LLMError, LLMProvider, json_object_text, render

_QUESTION_START = re.compile(
    r"^(?:can|could|would|will|should|shall|do|does|did|is|are|was|were|what|how|why|when|"
    r"where|who|which|whose|please|let's|let us|help me|tell me|show me|give me|any idea)\b",
    re.I,
)
_REACTION = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|ok|okay|sure|great|cool|nice|yes|no|yeah|yep|bye|wow|"
    r"aww+|oh|omg|yay|haha|lol|ooh|whoa|awesome|amazing|sweet|congrat\w*|good (?:morning|night|"
    r"evening|luck|job|idea)|certainly|of course|absolutely|no problem|happy to|glad|sorry|"
    r"here is|here are|here's|let me|i see|got it|sounds|looks|that's|that is|this is|it's|"
    r"it is|what a|how|so)\b",
    re.I,
)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|you're|you've|you'll|you'd)\b", re.I)
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|we|us|our|ours|i'm|i've|i'd|i'll)\b", re.I)
_RECOMMEND = re.compile(r"^(?:I|We)\s+(?:would\s+|'d\s+)?(?:recommend|suggest|advise)\s+(.+)$")
_DISCOURSE = re.compile(
    r"^(?:(?:actually|so|well|oh|also|btw|by the way|anyway|update|good news|fyi|"
    r"just so you know|quick update|and|but|ok|okay|yeah|yes|no|hey|hi|guess what|"
    r"funny enough|turns out|as it happens)\b[,:!]?\s*)+",
    re.I,
)
_VERBS = frozenset(
    str.split(
        "went got took made bought began became found left met saw ran quit sold have has am "
        "live work love like want need plan use start join move buy get take make"
    )
)
_CLAUSES = re.compile(r"\s*(?:,(?!\d{3})|;)\s*|\s+(?:and|but|so|because|though|although)\s+", re.I)
_CHANGE = re.compile(
    r"\b(?:moved|relocated|joined|started|switched|migrated|became|got|began|took up|quit|"
    r"stopped|adopted|bought|changed|married|engaged|divorced|hired|promoted)\b",
    re.I,
)


# an assistant sentence about the user's things counts as news only when it reports a change
# or relays one ("I've rebooked your appointment", "the courier says your parcel ..."), never
# when it restates, guesses, asks or advises ("You live in Munich", "you might like McFit")
REPORTS = re.compile(
    r"\b(?:now|instead|update|no\s+longer|changed|moved|rebooked|rescheduled|switched|upgraded|"
    r"downgraded|replaced|reassigned|assigned|updated|set|put|cancell?ed|transferred|"
    r"renewed|extended|postponed|says|said|confirmed|told)\b",
    re.I,
)
_HEDGED = re.compile(
    r"\b(?:might|could|should|may|would|can|maybe|perhaps|probably|if|unless|whether|"
    r"recommend|suggest|consider|try|want|wish|hope|think|believe|guess|remember|right)\b",
    re.I,
)
_TO_FIRST = [
    (r"\byou(?:'re| are)\b", "I am"),
    (r"\byou(?:'ve| have)\b", "I have"),
    (r"\byou(?:'ll| will)\b", "I will"),
    (r"\byou(?:'d| would)\b", "I would"),
    (r"\byourself\b", "myself"),
    (r"\byours\b", "mine"),
    (r"\byour\b", "my"),
    (r"(?:^|(?<=[:;,] ))you\b", "I"),
    (r"\byou\b", "me"),
]


def reported_change(sentence: str) -> bool:
    """An assistant sentence that reports a change to the user's things, stated as fact."""
    s = _DISCOURSE.sub("", sentence.strip())
    if not _SECOND_PERSON.search(s) or s.endswith("?") or _QUESTION_START.match(s):
        return False
    return bool(REPORTS.search(s)) and not _HEDGED.search(s)


_NEWS = re.compile(r"^\s*(?:update|good news|bad news|fyi|quick update|heads up|news)\b", re.I)


def relays_change(sentence: str) -> bool:
    """An assistant sentence that passes on a change to something, stated as fact
    ("the garage moved the service to the 19th"); what it is about the resolver finds."""
    s = _DISCOURSE.sub("", sentence.strip())
    if s.endswith("?") or _QUESTION_START.match(s):
        return False
    # the news marker itself ("Update:", "Good news:") counts, so read the whole sentence
    return bool(REPORTS.search(sentence) or _NEWS.match(sentence)) and not _HEDGED.search(s)


def as_users_words(sentence: str) -> str:
    """The sentence as the user would say it: "your flight is in business" -> "my flight ..."
    (the assistant's own "I"/"we" become "the assistant", so they are never read as the user)."""
    out = re.sub(r"\b(?:I|we)(?:'ve| have)\b", "the assistant has", expand(sentence))
    out = re.sub(r"\b(?:I|We|we)\b(?!')", "the assistant", out)
    for pattern, repl in _TO_FIRST:
        out = re.sub(pattern, repl, out, flags=re.I)
    out = re.sub(r":\s+", "; ", out)  # "Done: my plan is ..." reads as its own clause
    return out[:1].upper() + out[1:]


_CHANGED_MINE = re.compile(
    r"\b(?:changed|moved|switched|set|rebooked|rescheduled|updated|upgraded|put|transferred|"
    r"reassigned|assigned|raised|lowered|cut|increased|reduced)\s+my\s+"
    r"(?P<x>[a-z]+(?:\s+[a-z]+){0,2}?)\s+(?:to|for|into)\s+(?P<v>[^,;]+)",
    re.I,
)


_TRADED = re.compile(
    r"^(?:I|We)\s+(?:have\s+)?(?:traded(?:\s+in)?|swapped|exchanged|replaced)\s+"
    r"(?:my|our|the)\s+(?P<old>.+?)\s+(?:for|with)\s+(?:(?:a|an|the|my|our)\s+)?(?P<new>.+)$",
    re.I,
)


def _traded(text: str, label: str) -> Reading | None:
    """ "I traded the Yaris for a Kia EV6": what is owned now, and what it replaced."""
    m = _TRADED.match(text.strip().rstrip(".!"))
    if m is None:
        return None
    new, old = m.group("new").strip(), m.group("old").strip()
    return Reading(label, f"owns:{value_key(new)}", new, False, relation="owns", replaces=old)


def _changed_mine(text: str, label: str) -> Reading | None:
    """ "... has changed my delivery address to 27 Harbour Street": my delivery address's
    new value, whoever changed it."""
    m = _CHANGED_MINE.search(text)
    if m is None:
        return None
    x = m.group("x").lower()
    value = m.group("v").strip().rstrip(".!")
    key = MY_KEYS.get(x, "_".join(x.split()))
    return Reading(label, key, value, True) if value else None


class Extractor(Protocol):
    name: str

    def extract(
        self, text: str, *, speaker: Speaker, subject: str, anchor_us: int
    ) -> tuple[list[Fact], list[str]]:
        """Facts of one speaker's text, plus warnings about anything dropped."""
        ...


def _is_reaction(s: str) -> bool:
    """Small talk: "That's awesome, Mel!", "Sounds fun!", "Thanks!" (no fact, no "I")."""
    if not _REACTION.match(s) or _FIRST_PERSON.search(s) or re.search(r"\d", s):
        return False
    return s.rstrip().endswith("!") or len(s.split()) <= 4


def carries_nothing(sentence: str) -> bool:
    """Small talk or a fragment: nothing to find later ("Thanks!", "Ok", "Sounds fun!")."""
    s = _DISCOURSE.sub("", sentence.strip()).strip(" .!,")
    return len(s.split()) < 2 or _is_reaction(s)


def keep_sentence(sentence: str, speaker: Speaker) -> bool:
    """Whether a sentence can carry a fact of this speaker at all."""
    s = _DISCOURSE.sub("", sentence.strip())
    if not s or s.endswith("?") or len(s.split()) < 2:
        return False
    if _QUESTION_START.match(s) or _is_reaction(s):
        return False
    if speaker == "user":
        return not re.match(r"^(?:you|your)\b", s, re.I)
    if _SECOND_PERSON.search(s):
        return False  # addressed to the user, or restating what the user said
    return bool(_RECOMMEND.match(expand(s))) or not _FIRST_PERSON.search(s)


def validity(span: TimeSpan | None, text: str, anchor_us: int) -> tuple[int, int]:
    """Event-time bounds: the expression's window, an open interval for a change of state."""
    if span is None:
        return anchor_us, OPEN
    if span.mode == "since":
        return span.start, OPEN
    if span.mode == "until":
        return min(anchor_us, span.end - 1), span.end
    if _CHANGE.search(text):
        return span.start, OPEN  # "moved to Berlin last month": true from then on
    return span.start, span.end


def _readings(sentence: str, label: str, speaker: Speaker) -> list[Reading]:
    rec = _RECOMMEND.match(sentence)
    if speaker == "assistant" and rec:
        value = rec.group(1).rstrip(".! ")
        return [Reading("assistant", "recommends", value, False, relation="recommends")]
    out: list[Reading] = []
    carry = ""
    for clause in _CLAUSES.split(sentence):
        clause = _DISCOURSE.sub("", clause).strip()
        if not clause:
            continue
        first = clause.split()[0]
        if carry and first.islower() and (first.endswith("ed") or first in _VERBS):
            clause = f"{carry} {clause}"  # "I moved to Berlin and started at Siemens"
        reading = _read_from_subject(clause, label)
        if re.match(r"(?i:i|we)\b", clause):
            carry = clause.split()[0]
        if reading is None:
            continue
        if re.search(r"\bused\s+to\b", clause, re.I) and out:
            continue
        if all(r.attribute != reading.attribute for r in out):
            out.append(reading)
    return out


_INNER_SUBJECT = re.compile(r"\b(?:I|[Ww]e)\b")
# inner subjects a clause is read from: a clause is what lies between punctuation and
# conjunctions, so a spoken one holds one or two; each read is linear in the clause, and a
# turn of "I'm " said 7,500 times (no punctuation: one clause) read 7,500 suffixes (40 s)
INNER_SUBJECTS = 8


def _read_from_subject(clause: str, label: str) -> Reading | None:
    """The clause's reading, else the reading from an inner subject on ("After the diet I
    weigh 75 kg" reads from "I weigh 75 kg"), the first ``INNER_SUBJECTS`` of them."""
    reading = read_clause(clause, label)
    if reading is not None:
        return reading
    inner = (m.start() for m in _INNER_SUBJECT.finditer(clause) if m.start() > 0)
    for start in itertools.islice(inner, INNER_SUBJECTS):
        reading = read_clause(clause[start:], label)
        if reading is not None:
            return reading
    return None


_DANGLING = re.compile(r"(?:^|\s)(?:for|on|at|in|to|by|until|till|from|of)$", re.I)


def _entities(sentence: str, subject: str, readings: list[Reading]) -> tuple[str, ...]:
    found: list[str] = [subject] if subject not in {"assistant"} else []
    for r in readings:
        for v in (r.subject, r.value if r.relation else None, r.replaces):
            if v and len(v.split()) <= 5 and v not in found:
                found.append(v)
    for n in names(sentence):
        if n not in found:
            found.append(n)
    return tuple(found)


def _topic(sentence: str, speaker: Speaker, label: str) -> str:
    """Who an unstructured sentence is about: the speaking user when they speak of
    themselves, else the first name it mentions ("Siemens builds trains" is about Siemens)."""
    if speaker == "user" and _FIRST_PERSON.search(sentence):
        return label
    found = [n for n in names(sentence) if n != label]
    return found[0] if found else (label if speaker == "user" else "assistant")


def _fact(sentence: str, speaker: Speaker, r: Reading | None, subject: str, anchor: int,
          readings: list[Reading], owner: str | None = None) -> Fact:  # fmt: skip
    span = find_time(sentence, anchor)
    start, end = validity(span, sentence, anchor)
    mentioned = subject if speaker == "user" or owner else "assistant"
    relations: list[tuple[str, str, str]] = []
    if r is not None and r.relation and not r.negated and len(r.value.split()) <= 5:
        relations.append((r.subject, r.relation, r.value))
        if r.replaces:
            relations.append((r.value, "supersedes", r.replaces))
    return Fact(
        text=sentence,
        speaker=speaker,
        subject=r.subject if r is not None else (owner or _topic(sentence, speaker, subject)),
        attribute=None if r is None else r.attribute,
        value=None if r is None else r.value,
        single_valued=False if r is None else r.single_valued,
        negated=False if r is None else r.negated,
        time=span,
        entities=_entities(sentence, mentioned, readings),
        relations=tuple(relations),
        replaces=None if r is None else r.replaces,
        valid_from=start,
        valid_until=end,
        owner=owner,
    )


def _owner(sentence: str, speaker: Speaker, label: str) -> str | None:
    """The user owns what they say of themselves ("I", "my"); the assistant owns nothing."""
    return label if speaker == "user" and _FIRST_PERSON.search(sentence) else None


class RuleExtractor:
    """Sentence-level facts with frames for single-valued attributes; no model needed."""

    name = "rules"

    def extract(
        self, text: str, *, speaker: Speaker, subject: str, anchor_us: int
    ) -> tuple[list[Fact], list[str]]:
        facts: list[Fact] = []
        for sentence in sentences(text):
            owner = _owner(sentence, speaker, subject)
            plain = expand(sentence)
            if speaker == "assistant" and reported_change(sentence):
                # news about the user's things: read as the user would say it, kept as the
                # assistant's statement (speaker, tags) but owned by the user
                owner, plain = subject, as_users_words(sentence)
            elif not keep_sentence(sentence, speaker):
                continue
            span = find_time(plain, anchor_us)
            reading_text = plain.replace(span.expression, " ") if span else plain
            reading_text = " ".join(reading_text.split())
            traded = _traded(reading_text, subject) if owner else None
            readings = [traded] if traded else _readings(reading_text, subject, speaker)
            if span and not traded:
                # the time expression may be the value ("my appointment is on March 3")
                whole = _readings(plain, subject, speaker)
                dangling = any(_DANGLING.search(r.value) for r in readings)
                if any(r.attribute == "when" for r in whole) or not readings or dangling:
                    readings = whole or readings
            if speaker == "assistant" and owner is None:
                readings = [r for r in readings if r.subject != subject]
            elif speaker == "assistant":
                mine = _changed_mine(plain, subject)
                readings = [mine] if mine is not None else readings
            chosen: list[Reading | None] = list(readings) or [None]
            for r in chosen:
                facts.append(_fact(sentence, speaker, r, subject, anchor_us, readings, owner))
        return facts, []


class LLMExtractor:
    """Asks the model per speaker; falls back to the rules on failure, never drops silently.

    Every fact the model returns must be grounded in that speaker's own words
    (most of its meaning-bearing words occur there), which rejects both
    hallucinations and facts borrowed from the other side of the conversation.
    """

    name = "llm"

    def __init__(self, provider: LLMProvider, *, version: int = 1, grounding: float = 0.6):
        self.provider = provider
        self.version = version
        self.grounding = grounding
        self.fallback = RuleExtractor()

    def extract(
        self, text: str, *, speaker: Speaker, subject: str, anchor_us: int
    ) -> tuple[list[Fact], list[str]]:
        prompt = render(
            f"extract_{speaker}", self.version, text=text, timestamp=iso(anchor_us) or ""
        )
        try:
            raw = self.provider.complete(prompt, temperature=0.0, json_mode=True)
            items = _parse_facts(raw)
        except (LLMError, ValueError) as exc:
            backup, _ = self.fallback.extract(
                text, speaker=speaker, subject=subject, anchor_us=anchor_us
            )
            return backup, [f"{speaker} extraction fell back to rules: {exc}"]
        facts: list[Fact] = []
        warnings: list[str] = []
        source = content_stems(text)
        for item in items:
            fact_text = str(item.get("text") or "").strip()
            stems = content_stems(fact_text)
            if not fact_text or not stems:
                continue
            if len(stems & source) < self.grounding * len(stems):
                warnings.append(f"rejected {speaker} fact not grounded in its turn: {fact_text!r}")
                continue
            who = str(item.get("subject") or "").strip()
            if speaker == "user" and who.lower() in {"", "user", "i", "me", "the user", "we"}:
                who = subject
            if speaker == "assistant" and who.lower() in {"user", "the user", subject.lower()}:
                warnings.append(f"rejected assistant fact about the user: {fact_text!r}")
                continue
            expr = item.get("time_expression")
            span = find_time(str(expr), anchor_us) if expr else None
            span = span or find_time(fact_text, anchor_us)
            start, end = validity(span, fact_text, anchor_us)
            rels = [
                (str(r["source"]), str(r["relation"]), str(r["target"]))
                for r in item.get("relations") or []
                if isinstance(r, dict) and {"source", "relation", "target"} <= set(r)
            ]
            ents = [str(e) for e in item.get("entities") or [] if isinstance(e, str) and e]
            attribute = item.get("attribute")
            facts.append(
                Fact(
                    text=fact_text,
                    speaker=speaker,
                    subject=who or "assistant",
                    attribute=str(attribute) if attribute else None,
                    value=None if item.get("value") is None else str(item["value"]),
                    single_valued=bool(item.get("single_valued")),
                    negated=bool(item.get("negated")),
                    time=span,
                    entities=tuple(dict.fromkeys([who, *ents])) if who else tuple(ents),
                    relations=tuple(rels),
                    valid_from=start,
                    valid_until=end,
                )
            )
        return facts, warnings


def _parse_facts(raw: str) -> list[dict[str, Any]]:
    """The ``facts`` list of a JSON answer, tolerating a code fence around it."""
    found = json_object_text(raw)
    if found is None:
        raise ValueError(f"no JSON object in the extraction answer: {raw[:80]!r}")
    try:
        data = json.loads(found)
    except RecursionError:  # an answer nested too deeply is as unusable as one not JSON
        raise ValueError("the extraction answer nests too deeply to read") from None
    facts = data.get("facts") if isinstance(data, dict) else None
    if not isinstance(facts, list):
        raise ValueError("the extraction answer has no 'facts' list")
    return [f for f in facts if isinstance(f, dict)]
