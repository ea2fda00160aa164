"""Stored keys come from the frozen key normaliser (text/keys.py), not the ranking stemmer.

Ingest stores keys such as ``intent:build`` and ``does:smoke`` and matches later
facts against them; if the ranking stemmer built them, tuning it would silently
stop new facts from superseding stored ones. These tests pin version 1's output
(the Porter stems ingest keys were built with before the module existed, so stored
rows keep matching) and fail when a key builder starts depending on a stemmer.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from attestor_arango.ingest.frames import read_clause
from attestor_arango.text.keys import VERSION, key_word

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "attestor_arango"

# version 1, pinned: a change here is a new key version and a migration note (keys.py)
V1: dict[str, str] = {
    "build": "build", "building": "build", "builds": "build", "built": "built", "plans": "plan",
    "planning": "plan", "planned": "plan", "intend": "intend", "hoping": "hope", "going": "go",
    "smoking": "smoke", "smoker": "smoker", "smokes": "smoke", "quit": "quit", "cats": "cat",
    "caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "agreed": "agre",
    "feed": "feed", "plastered": "plaster", "bled": "bled", "motoring": "motor", "sing": "sing",
    "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
    "tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
    "filing": "file", "happy": "happi", "sky": "sky", "say": "sai", "relational": "relat",
    "conditional": "condit", "rational": "ration", "valenci": "valenc", "hesitanci": "hesit",
    "digitizer": "digit", "conformabli": "conform", "radicalli": "radic",
    "differentli": "differ", "vileli": "vile", "analogousli": "analog",
    "vietnamization": "vietnam", "predication": "predic", "operator": "oper",
    "feudalism": "feudal", "decisiveness": "decis", "hopefulness": "hope",
    "callousness": "callous", "formaliti": "formal", "sensitiviti": "sensit",
    "sensibiliti": "sensibl", "triplicate": "triplic", "formative": "form",
    "formalize": "formal", "electriciti": "electr", "electrical": "electr", "goodness": "good",
    "revival": "reviv", "allowance": "allow", "inference": "infer", "airliner": "airlin",
    "gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens",
    "irritant": "irrit", "replacement": "replac", "adjustment": "adjust", "dependent": "depend",
    "adoption": "adopt", "homologou": "homolog", "communism": "commun", "activate": "activ",
    "angulariti": "angular", "effective": "effect", "bowdlerize": "bowdler",
    "probate": "probat", "rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll",
    "generalizations": "gener", "oscillators": "oscil", "yes": "ye", "ys": "y", "y": "y",
    "s": "", "as": "a", "was": "wa", "news": "new", "kilograms": "kilogram", "pounds": "pound",
    "weighs": "weigh", "running": "run", "swimming": "swim", "hiking": "hike",
    "married": "marri", "dating": "date", "Paris": "pari", "Python": "python", "MySQL": "mysql",
    "3rd": "3rd", "$5": "$5", "80kg": "80kg", "café": "café", "naïve": "naïv",
}  # fmt: skip

# the modules that build keys stored with a memory (attributes, value keys)
KEY_BUILDERS = ("text/keys.py", "ingest/text.py", "ingest/frames.py")
STEMMERS = ("attestor_arango.text.stemming", "snowballstemmer", "Stemmer", "nltk")


def test_version_one_output_is_pinned() -> None:
    assert VERSION == 1
    assert {word: key_word(word) for word in V1} == V1


def _imported(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("module", KEY_BUILDERS)
def test_key_builders_do_not_import_a_stemmer(module: str) -> None:
    imported = _imported(PACKAGE / module)
    assert not {
        name for name in imported for s in STEMMERS if name == s or name.startswith(f"{s}.")
    }


def test_the_key_normaliser_imports_only_the_standard_library() -> None:
    imported = _imported(PACKAGE / "text/keys.py")
    assert all(name.split(".")[0] in sys.stdlib_module_names for name in imported), imported


def test_importing_the_key_builders_loads_no_stemmer() -> None:
    """Indirect dependencies count too: nothing a key builder imports may pull a stemmer."""
    probe = (
        "import sys, attestor_arango.ingest.frames\n"
        f"print(sorted(m for m in sys.modules if m.startswith({STEMMERS!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("clause", "attribute"),
    [
        ("I am planning to build a treehouse", "intent:build"),
        ("I quit smoking", "does:smoke"),
        ("I love cats", "likes:cat"),
    ],
)
def test_stored_attribute_keys_use_the_frozen_words(clause: str, attribute: str) -> None:
    reading = read_clause(clause, "Ana")
    assert reading is not None
    assert reading.attribute == attribute
