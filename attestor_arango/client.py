"""The public home of the HTTP clients: ``from attestor_arango.client import MemoryClient``.

The clients live in ``interfaces/client.py`` and ``interfaces/async_client.py``; this
module only names them, so the import stays light (httpx and pydantic models, no store,
no numpy).
"""

from attestor_arango.interfaces.async_client import AsyncMemoryClient
from attestor_arango.interfaces.client import MemoryClient

__all__ = ["AsyncMemoryClient", "MemoryClient"]
