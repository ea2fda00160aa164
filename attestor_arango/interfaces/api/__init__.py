"""REST interface: route table, auth, OpenAPI and the Starlette app.

Importing this package does not import Starlette; ``api.app`` does. The client
uses ``api.spec``, ``api.codec`` and ``api.errors`` only.
"""
