"""Settings, read from the environment once at start-up."""

from __future__ import annotations

import os
from dataclasses import dataclass

REQUEST_TIMEOUT_SECONDS = 30
MAX_UPLOAD_MB = 10
DEFAULT_PAGE_SIZE = 50


@dataclass(frozen=True)
class Settings:
    database_url: str
    stripe_secret_key: str
    jwt_signing_key: str
    request_timeout: float = REQUEST_TIMEOUT_SECONDS


def parse_config(env: dict[str, str] | None = None) -> Settings:
    env = dict(os.environ) if env is None else env
    return Settings(
        database_url=env["DATABASE_URL"],
        stripe_secret_key=env["STRIPE_SECRET_KEY"],
        jwt_signing_key=env["JWT_SIGNING_KEY"],
    )
