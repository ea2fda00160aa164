"""What an extractor found, held to the checks ``add`` applies, before anything is written.

An extractor's facts carry names (the subject, the owner, the entities it mentions),
a category (the attribute's first part) and relations between names: from a model's
answer, or read by the rules from the speaker's own words. ``add`` refuses a name with a
control character (a terminal showing it would obey an escape sequence), a lone UTF-16
surrogate or more than ``MAX_LABEL`` characters; ingest wrote such names to the store
and the graph unchecked, and one a UTF-8 store cannot hold failed the user's whole
round. Here each fact is held to the same checks (``validation.check_label``,
``check_content``), and what fails is dropped on its own, with a warning in the round's
result, as ingest reports a fact it rejects: a bad entity or relation leaves the fact
without it, a bad category or value leaves the fact unstructured (its words are kept),
and a fact whose words or subject fail is dropped (the round's verbatim memory still
keeps what was said).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from attestor_arango.errors import ValidationError
from attestor_arango.ingest.model import Fact
from attestor_arango.validation import check_content, check_label, check_text


def screen_facts(facts: Sequence[Fact], max_chars: int) -> tuple[list[Fact], list[str]]:
    """``facts`` as the write path may store them, and a warning for each label dropped.

    ``max_chars`` is the longest memory text (``Config.max_content_chars``). Raises nothing:
    a bad label is the extractor's, not the caller's, so the round goes on without it.
    """
    kept: list[Fact] = []
    warnings: list[str] = []
    for fact in facts:
        screened = _screen(fact, max_chars, warnings)
        if screened is not None:
            kept.append(screened)
    return kept, warnings


def _screen(fact: Fact, max_chars: int, warnings: list[str]) -> Fact | None:
    side = fact.speaker
    try:
        check_content(fact.text, max_chars)
        subject = _label(fact.subject, "subject")
        owner = None if fact.owner is None else _label(fact.owner, "owner")
    except ValidationError as err:
        warnings.append(f"dropped a {side} fact: {err.message}")
        return None
    fact = replace(fact, subject=subject, owner=owner)
    if fact.attribute is not None:
        try:
            _label(fact.attribute.split(":", 1)[0], "category")
            check_text(fact.attribute, "attribute")
            for value in (fact.value, fact.replaces):
                if value is not None:
                    check_text(value, "value")
        except ValidationError as err:
            warnings.append(f"kept a {side} fact without its attribute: {err.message}")
            fact = replace(fact, attribute=None, value=None, single_valued=False, replaces=None)
    entities: list[str] = []
    for name in fact.entities:
        if not name.strip():
            continue  # nothing to name: the graph skips it as before
        try:
            entities.append(_label(name, "an entity name"))
        except ValidationError as err:
            warnings.append(f"dropped an entity of a {side} fact: {err.message}")
    relations: list[tuple[str, str, str]] = []
    for source, relation, target in fact.relations:
        if not source.strip() or not target.strip():
            continue  # an end without a name: the graph skips it as before
        try:
            ends = (_label(source, "a relation's source"), _label(target, "a relation's target"))
            relations.append((ends[0], _label(relation, "a relation"), ends[1]))
        except ValidationError as err:
            warnings.append(f"dropped a relation of a {side} fact: {err.message}")
    return replace(fact, entities=tuple(dict.fromkeys(entities)), relations=tuple(relations))


def _label(value: str, what: str) -> str:
    """``value`` as ``add`` takes a name (whitespace collapsed); ValidationError otherwise."""
    label = check_label(value, what)
    if label is None:  # only for None, which no fact holds
        raise ValidationError(f"{what} is missing")
    return label
