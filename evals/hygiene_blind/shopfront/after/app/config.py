"""Settings, read from the environment once at start-up (never from files)."""

from __future__ import annotations

import os
from dataclasses import dataclass

REQUEST_TIMEOUT_SECONDS = 30
MAX_UPLOAD_MB = 25
DEFAULT_PAGE_SIZE = 50


@dataclass(frozen=True)
class Settings:
    database_url: str
    stripe_secret_key: str
    jwt_signing_key: str
    request_timeout: float = REQUEST_TIMEOUT_SECONDS
    max_upload_mb: int = MAX_UPLOAD_MB


def parse_config(env: dict[str, str] | None = None) -> Settings:
    """Build the settings from `env` (default: the process environment)."""
    env = dict(os.environ) if env is None else env
    return Settings(
        database_url=env["DATABASE_URL"],
        stripe_secret_key=env["STRIPE_SECRET_KEY"],
        jwt_signing_key=env["JWT_SIGNING_KEY"],
        request_timeout=float(env.get("REQUEST_TIMEOUT", REQUEST_TIMEOUT_SECONDS)),
        max_upload_mb=int(env.get("MAX_UPLOAD_MB", MAX_UPLOAD_MB)),
    )
