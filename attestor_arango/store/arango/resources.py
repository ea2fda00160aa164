"""Where the backend's data files are: ``aql/`` and ``schemas/``, installed or checked out.

The repository keeps both directories at its top level. A built wheel carries them inside
the package (``attestor_arango/aql``, ``attestor_arango/schemas``; see the hatch
``force-include`` in ``pyproject.toml``), so an installed package reads them through
``importlib.resources``. An editable install or a plain source checkout has no copy inside
the package; there the top-level directories of the checkout are used.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from attestor_arango.errors import StoreError

PACKAGE = "attestor_arango"
# Only meaningful in a source checkout: attestor_arango/store/arango/ -> the repository root.
SOURCE_ROOT = Path(__file__).resolve().parents[3]
DATA_DIRS = ("aql", "schemas")


def data_dir(name: str) -> Traversable:
    """The packaged ``name`` directory, else the checkout's; raises ``StoreError`` if neither.

    Raises ``StoreError`` naming both places looked at, so a broken install says what to do.
    """
    if name not in DATA_DIRS:
        raise StoreError(f"unknown data directory {name!r}; one of {list(DATA_DIRS)}")
    packaged = resources.files(PACKAGE) / name
    if packaged.is_dir():
        return packaged
    checkout = SOURCE_ROOT / name
    if checkout.is_dir() and (SOURCE_ROOT / "pyproject.toml").is_file():
        return checkout
    raise StoreError(
        f"the ArangoDB backend's {name}/ files are missing: neither {packaged} (installed "
        f"package) nor {checkout} (source checkout) exists; reinstall attestor-arango from "
        "a wheel or sdist built by its pyproject.toml, or install the checkout with pip -e",
    )
