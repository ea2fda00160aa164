"""The four-decision resolver: ADD, UPDATE, INVALIDATE or NOOP for each fact.

Candidates are the similar memories the retrieval pipeline found in the same
scope plus the active memories on the same subject and attribute. Attribution
holds here too: a user fact may only act on the user's memories (or ones
written directly with ``add``), an assistant fact only on the assistant's.
Ties go to ADD: a duplicate-ish row is recoverable, a wrong supersession
quietly loses a belief.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from attestor_arango.errors import ValidationError
from attestor_arango.ingest.extract import relays_change
from attestor_arango.ingest.frames import read_clause
from attestor_arango.ingest.model import Action, Decision, Fact
from attestor_arango.ingest.text import content_stems, expand, normalise, value_key, words
from attestor_arango.llm import LLMError, LLMProvider, json_object_text, render
from attestor_arango.models import Memory
from attestor_arango.validation import check_text, entity_key

# Plans can coexist ("I want to help people" and "I want to help make that happen"):
# a new plan replaces an old one only when the speaker says it changed.
SOFT = frozenset({"intent"})
RESTATED_AFTER_US = 86_400_000_000  # one day: a repeat within a conversation is no news
CHANGE = re.compile(
    r"\b(?:instead|changed my mind|anymore|no longer|now|actually|rather|switched|decided|"
    r"after all|not any ?more|new plan|first)\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Known:
    """A candidate memory with its structured reading (stored, or re-read from its text)."""

    memory: Memory
    speaker: str | None
    subject: str | None
    attribute: str | None
    value: str | None
    negated: bool = False
    owner: str | None = None  # the user, for an assistant's report of a change to their things


def known(memory: Memory, label: str = "user") -> Known:
    info = memory.metadata.get("ingest") if isinstance(memory.metadata, dict) else None
    if isinstance(info, dict):
        return Known(
            memory,
            info.get("speaker"),
            info.get("subject"),
            info.get("attribute"),
            info.get("value"),
            bool(info.get("negated")),
            info.get("owner"),
        )
    reading = read_clause(expand(memory.content), memory.entity or label)
    if reading is None:
        return Known(memory, None, memory.entity, None, None)
    return Known(memory, None, reading.subject, reading.attribute, reading.value, reading.negated)


def eligible(fact: Fact, k: Known) -> bool:
    """Speaker lock: which memories a fact of this speaker may act on. The user's side is
    what the user said (or was written with ``add``) and the assistant's reports of changes
    to the user's things (owned by the user); the assistant's own facts are the other side."""
    return _users_side(fact.speaker, fact.owner) == _users_side(k.speaker, k.owner)


def _users_side(speaker: str | None, owner: str | None) -> bool:
    return speaker in {None, "user"} or owner is not None


def restated_later(fact: Fact, k: Known) -> bool:
    """The same claim said again at a later event time (a day or more on): news again, as
    the write path treats the same words ("by train" -> "by car" -> "by train")."""
    return fact.valid_from >= k.memory.us("valid_from") + RESTATED_AFTER_US


def _same_subject(fact: Fact, k: Known) -> bool:
    """Same key, or one names the other more fully with the same head noun
    ("launch" and "product launch"; never "sister" and "user")."""
    if k.subject is None:
        return False
    a, b = entity_key(k.subject).split(), entity_key(fact.subject).split()
    if a == b:
        return True
    return bool(a and b) and a[-1] == b[-1] and (set(a) <= set(b) or set(b) <= set(a))


def same_attribute(a: str | None, b: str | None) -> bool:
    """Equal; one names the other more fully ("monthly_rent", "rent"); or two quantities of
    one unit where one names no verb ("num:*:kilogram")."""
    if a is None or b is None:
        return False
    if a == b:
        return True
    if ":" not in a and ":" not in b:  # "monthly_rent" and "rent": one names the other fully
        wa, wb = a.split("_"), b.split("_")
        return wa[-1] == wb[-1] and (set(wa) <= set(wb) or set(wb) <= set(wa))
    pa, pb = a.split(":"), b.split(":")
    return (
        len(pa) == len(pb) == 3 and pa[0] == pb[0] == "num" and pa[2] == pb[2]
        and "*" in (pa[1], pb[1])
    )  # fmt: skip


def _overlap(a: str | None, b: str | None) -> bool:
    return bool(a and b and set(value_key(a).split()) & set(value_key(b).split()))


def _refines(new: str, old: str) -> bool:
    """The new value says the old one with more detail ("Berlin" -> "Berlin, Kreuzberg")."""
    n, o = set(value_key(new).split()), set(value_key(old).split())
    return bool(o) and o < n


def _more_detail(new_text: str, old_text: str) -> bool:
    n, o = content_stems(new_text), content_stems(old_text)
    return bool(o) and o < n


_MANY = frozenset({"likes", "owns", "uses", "does"})  # attributes that hold many values


def _names_subject(text: str, subject: str | None, label: str) -> bool:
    """Whether a sentence speaks of a stored subject: all its words, or "the <head noun>"
    ("the offsite" for "team offsite"); never the user themselves."""
    if not subject or entity_key(subject) == entity_key(label) or "'s" in subject:
        return False
    key = entity_key(subject).split()
    said = words(text)
    if not key or key[-1] not in said:
        return False
    return set(key) <= set(said) or f"the {key[-1]}" in " ".join(said)


def relayed_target(fact: Fact, candidates: Sequence[Known], label: str) -> Known | None:
    """The user's memory an assistant's relayed change is about ("the plumber rescheduled
    for the afternoon" -> "The plumber is coming in the morning"): the most relevant
    user-side memory of one value whose subject the sentence names."""
    if fact.speaker != "assistant" or fact.owner is not None or not relays_change(fact.text):
        return None
    for k in candidates:
        if not _users_side(k.speaker, k.owner) or k.attribute is None:
            continue
        if k.attribute.split(":", 1)[0] in _MANY:
            continue
        if k.memory.us("valid_from") < fact.valid_from and _names_subject(
            fact.text, k.subject, label
        ):
            return k
    return None


class Resolver(Protocol):
    name: str

    def decide(self, fact: Fact, candidates: Sequence[Memory], episode_id: str) -> Decision: ...


class RuleResolver:
    """Deterministic resolution from the structured readings; no model needed."""

    name = "rules"

    def __init__(self, label: str = "user") -> None:
        self.label = label

    def decide(self, fact: Fact, candidates: Sequence[Memory], episode_id: str) -> Decision:
        def out(action: Action, k: Known | None, reason: str) -> Decision:
            target = None if k is None else k.memory.id
            return Decision(action, fact, episode_id, target, reason, self.name)

        every = [known(m, self.label) for m in candidates]
        relayed = relayed_target(fact, every, self.label)
        if relayed is not None:
            return out(Action.INVALIDATE, relayed, f"the assistant relays a change of "
                       f"{relayed.subject}")  # fmt: skip
        pool = [k for k in every if eligible(fact, k)]
        text = normalise(fact.text)
        for k in pool:
            if normalise(k.memory.content) == text:
                if restated_later(fact, k):
                    return out(Action.UPDATE, k, "the same statement again, later: news again")
                return out(Action.NOOP, k, "the same statement is already stored")
        if fact.attribute:
            same = [k for k in pool if _same_subject(fact, k)]
            if fact.replaces:
                for k in same:
                    base = (k.attribute or "").split(":", 1)[0]
                    if base == fact.category and _overlap(k.value, fact.replaces):
                        return out(
                            Action.INVALIDATE, k, f"replaced: {fact.replaces} -> {fact.value}"
                        )
            for k in (k for k in same if same_attribute(k.attribute, fact.attribute)):
                if k.value is not None and value_key(k.value) == value_key(fact.value or ""):
                    if k.negated != fact.negated:
                        return out(Action.INVALIDATE, k, "the same claim with its polarity flipped")
                    if _more_detail(fact.text, k.memory.content):
                        return out(Action.UPDATE, k, "same attribute and value, more detail")
                    if restated_later(fact, k):
                        return out(Action.UPDATE, k, f"{fact.attribute} = {fact.value} again")
                    return out(Action.NOOP, k, f"{fact.attribute} = {fact.value} is known")
                same_sign = k.negated == fact.negated
                if k.value and fact.value and same_sign and _refines(fact.value, k.value):
                    return out(Action.UPDATE, k, f"{k.value!r} refined to {fact.value!r}")
                if fact.single_valued and (fact.category not in SOFT or CHANGE.search(fact.text)):
                    return out(
                        Action.INVALIDATE, k, f"{fact.attribute}: {k.value!r} -> {fact.value!r}"
                    )
                if fact.category == "prefers" and _overlap(k.value, fact.value):
                    return out(Action.INVALIDATE, k, f"preference changed to {fact.value!r}")
                if k.negated != fact.negated and _overlap(k.value, fact.value):
                    return out(Action.INVALIDATE, k, "the same claim with its polarity flipped")
        mine = content_stems(fact.text)
        for k in pool:
            theirs = content_stems(k.memory.content)
            if theirs and theirs == mine:
                if restated_later(fact, k):
                    return out(Action.UPDATE, k, "the same content again, later: news again")
                return out(Action.NOOP, k, "the same content is already stored")
            if theirs and theirs < mine and len(theirs) >= 0.6 * len(mine) and k.attribute is None:
                return out(Action.UPDATE, k, "the stored statement with more detail")
        return out(Action.ADD, None, "new information")


class LLMResolver:
    """Asks the model for one decision per fact; anything unusable becomes ADD.

    A provider failure (timeout, unreachable) falls back to the rule resolver,
    so a slow endpoint degrades quality, never completeness. Candidates the
    speaker lock excludes are never shown to the model.
    """

    name = "llm"

    def __init__(self, provider: LLMProvider, *, version: int = 1, label: str = "user") -> None:
        self.provider = provider
        self.version = version
        self.rules = RuleResolver(label)
        self.label = label

    def decide(self, fact: Fact, candidates: Sequence[Memory], episode_id: str) -> Decision:
        pool = [m for m in candidates if eligible(fact, known(m, self.label))]
        if not pool:
            return Decision(Action.ADD, fact, episode_id, None, "no similar memory", self.name)
        listing = "\n".join(f"{m.id} | {m.content}" for m in pool)
        described = f"{fact.text}\n(speaker: {fact.speaker}; subject: {fact.subject})"
        prompt = render("resolve", self.version, fact=described, candidates=listing)
        try:
            raw = self.provider.complete(prompt, temperature=0.0, json_mode=True)
        except LLMError as exc:
            d = self.rules.decide(fact, pool, episode_id)
            return Decision(d.action, fact, episode_id, d.target_id,
                            f"LLM failed ({exc.code}); rules: {d.reason}", "fallback")  # fmt: skip
        return parse_decision(raw, fact, episode_id, {m.id for m in pool})


def parse_decision(raw: str, fact: Fact, episode_id: str, allowed: set[str]) -> Decision:
    """A model answer as a Decision; unparseable or unsafe answers become ADD."""

    def add(why: str) -> Decision:
        return Decision(Action.ADD, fact, episode_id, None, f"unparseable decision: {why}",
                        "fallback")  # fmt: skip

    found = json_object_text(raw or "")
    if found is None:
        return add(f"no JSON object in {raw[:60]!r}")
    try:
        data = json.loads(found)
    except (ValueError, RecursionError) as exc:  # not JSON, or nested too deeply to read
        return add(str(exc))
    if not isinstance(data, dict):
        return add("the answer is not a JSON object")
    try:
        action = Action(str(data.get("action", "")).strip().upper())
    except ValueError:
        return add(f"unknown action {data.get('action')!r}")
    target = data.get("target_id")
    reason = str(data.get("reason") or "")[:500]
    try:  # kept in the memory's metadata: text a UTF-8 reader can give back
        check_text(reason, "the model's reason")
    except ValidationError:
        reason = "the model's reason was not valid text (a lone UTF-16 surrogate)"
    if action is Action.ADD:
        return Decision(action, fact, episode_id, None, reason, "llm")
    if not isinstance(target, str) or target not in allowed:
        return add(f"{action.value} names target {target!r}, which is not a candidate")
    return Decision(action, fact, episode_id, target, reason, "llm")
