"""``/docs``: a human-readable page of the service's OpenAPI 3.1 document.

Swagger UI's files come from the ``swagger-ui-bundle`` wheel installed with the
server extra and are served from ``/docs/assets/``: the page loads nothing from
a CDN, so it works on a machine with no network and under a strict CSP.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

ASSETS = ("swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png")
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'"
)

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>attestor-arango API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
"""

INIT = """window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  tryItOutEnabled: false
});
"""


def asset_dir() -> Path:
    """Where the installed swagger-ui-bundle keeps its files."""
    from swagger_ui_bundle import swagger_ui_path

    return Path(str(swagger_ui_path))


def docs_routes() -> list[Route]:
    """The page and its assets (only the files the page names)."""
    root = asset_dir()

    async def page(request: Request) -> Response:
        return HTMLResponse(PAGE, headers={"Content-Security-Policy": CSP})

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name == "init.js":
            return PlainTextResponse(INIT, media_type="text/javascript")
        if name not in ASSETS:
            return PlainTextResponse("no such asset", status_code=404)
        return FileResponse(root / name, headers={"Cache-Control": "public, max-age=86400"})

    return [
        Route("/docs", page, methods=["GET"]),
        Route("/docs/assets/{name}", asset, methods=["GET"]),
    ]
