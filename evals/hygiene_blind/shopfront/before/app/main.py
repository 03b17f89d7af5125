"""Entry point: `python -m app.main [--port N] [--reload]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.api import auth, orders
from app.config import Settings, parse_config

STATIC_DIR = Path(__file__).resolve().parent.parent / "web" / "dist"


def create_app(settings: Settings | None = None) -> dict:
    settings = settings or parse_config()
    routes = [*orders.routes(), *auth.routes()]
    return {"settings": settings, "routes": routes, "static": STATIC_DIR}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="shopfront")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--reload", action="store_true", help="restart on code changes")
    args = parser.parse_args(argv)
    serve(create_app(), port=args.port, restart_on_change=args.reload)


def serve(app: dict, *, port: int, restart_on_change: bool) -> None:
    import uvicorn

    uvicorn.run(app, port=port, reload=restart_on_change)


if __name__ == "__main__":
    main()
