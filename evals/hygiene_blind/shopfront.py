"""shopfront: a web shop's API (Python) and its browser client (TypeScript)."""

from __future__ import annotations

import base64
import json

from evals.hygiene_blind.model import Domain, Mem, Store

PYPROJECT = """\
[project]
name = "shopfront"
version = "2.3.0"
requires-python = ">=3.11"
dependencies = [
  "starlette>=0.37",
  "httpx>=0.27",
  "sqlalchemy>=2.0",
  "stripe>=9.0",
  "argon2-cffi>=23.1",
  "pyjwt>=2.8",
]

[tool.pytest.ini_options]
addopts = "-q"
markers = ["slow: needs the Postgres container"]

[tool.ruff]
line-length = 100
"""

MAKEFILE = """\
.PHONY: test test-all lint migrate web release

test:
\tpytest -m "not slow"

test-all:
\tpytest

lint:
\truff check . && ruff format --check .

migrate:
\tpython -m app.db migrate migrations/

web:
\tcd web && npm run build

release:
\t./scripts/release.sh $(VERSION)
"""

GITIGNORE = "dist/\nweb/dist/\nweb/node_modules/\n.venv/\n__pycache__/\n.env\n"

CONFIG_BEFORE = '''"""Settings, read from the environment once at start-up."""

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
'''

CONFIG_AFTER = '''"""Settings, read from the environment once at start-up (never from files)."""

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
'''

MAIN_TEMPLATE = '''"""Entry point: `python -m app.main [--port N] [{flag}]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.api import auth, orders
from app.config import Settings, parse_config

STATIC_DIR = Path(__file__).resolve().parent.parent / "web" / "dist"


def create_app(settings: Settings | None = None) -> dict:
    settings = settings or parse_config()
    routes = [*orders.routes(), *auth.routes()]
    return {{"settings": settings, "routes": routes, "static": STATIC_DIR}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="shopfront")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("{flag}", action="store_true", help="restart on code changes")
    args = parser.parse_args(argv)
    serve(create_app(), port=args.port, restart_on_change=args.{attr})


def serve(app: dict, *, port: int, restart_on_change: bool) -> None:
    import uvicorn

    uvicorn.run(app, port=port, reload=restart_on_change)


if __name__ == "__main__":
    main()
'''

HTTP_BEFORE = '''"""Outbound HTTP with a timeout and retries for idempotent requests."""

from __future__ import annotations

import time

import httpx

from app.config import REQUEST_TIMEOUT_SECONDS

RETRYABLE_STATUSES = (502, 503, 504)
MAX_REDIRECTS = 5


def fetch_page(url: str, *, method: str = "GET", attempts: int = 3) -> httpx.Response:
    retryable = method == "GET"
    with httpx.Client(timeout=REQUEST_TIMEOUT_SECONDS, max_redirects=MAX_REDIRECTS) as client:
        for attempt in range(attempts if retryable else 1):
            response = client.request(method, url, follow_redirects=True)
            if not retryable or response.status_code not in RETRYABLE_STATUSES:
                return response
            time.sleep(0.5 * 2**attempt)
    return response
'''

HTTP_AFTER = '''"""Outbound HTTP with a timeout, capped redirects, and retries for idempotent requests."""

from __future__ import annotations

import time

import httpx

from app.config import REQUEST_TIMEOUT_SECONDS

RETRYABLE_STATUSES = (502, 503, 504)
MAX_REDIRECTS = 5
RETRY_BACKOFF_SECONDS = 0.5


def fetch_document(
    url: str, *, method: str = "GET", timeout: float = REQUEST_TIMEOUT_SECONDS, attempts: int = 3
) -> httpx.Response:
    """Fetch `url`. GET is retried on 502, 503 and 504 with backoff; other methods never are."""
    retryable = method == "GET"
    with httpx.Client(timeout=timeout, max_redirects=MAX_REDIRECTS) as client:
        for attempt in range(attempts if retryable else 1):
            response = client.request(method, url, follow_redirects=True)
            if not retryable or response.status_code not in RETRYABLE_STATUSES:
                return response
            time.sleep(RETRY_BACKOFF_SECONDS * 2**attempt)
    return response


# The old name, kept because the payment webhooks still import it.
fetch_page = fetch_document
'''

RATELIMIT_BEFORE = '''"""Per-key rate limiting for the public API."""

from __future__ import annotations

import time

DEFAULT_RATE = 100  # requests per minute per API key


class RateLimiter:
    def __init__(self, rate: int = DEFAULT_RATE) -> None:
        self.rate = rate
        self.buckets: dict[str, tuple[float, float]] = {}

    def allow(self, api_key: str) -> bool:
        tokens, stamp = self.buckets.get(api_key, (float(self.rate), time.monotonic()))
        now = time.monotonic()
        tokens = min(float(self.rate), tokens + (now - stamp) * self.rate / 60)
        if tokens < 1:
            self.buckets[api_key] = (tokens, now)
            return False
        self.buckets[api_key] = (tokens - 1, now)
        return True
'''

RATELIMIT_AFTER = '''"""Per-key token buckets for the public API."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

DEFAULT_RATE = 100  # requests per minute per API key
BURST = 20


@dataclass
class TokenBucket:
    rate: int = DEFAULT_RATE
    burst: int = BURST
    tokens: float = float(BURST)
    stamp: float = field(default_factory=time.monotonic)

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(float(self.burst), self.tokens + (now - self.stamp) * self.rate / 60)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def retry_after_seconds(self) -> int:
        return max(1, math.ceil((1 - self.tokens) * 60 / self.rate))


_buckets: dict[str, TokenBucket] = {}


def limit_for(api_key: str) -> TokenBucket:
    return _buckets.setdefault(api_key, TokenBucket())
'''

ORDERS_CORE = '''"""Orders API: cursor pagination and totals computed on the server."""

from __future__ import annotations

from app.config import DEFAULT_PAGE_SIZE
from app.db import Repository, get_session

MAX_PAGE_SIZE = 200


class OrderSerializer:
    fields = ("id", "status", "amount_cents", "currency", "created_at")

    def dump(self, order) -> dict:
        return {name: getattr(order, name) for name in self.fields}


def list_orders(request) -> dict:
    """One page of the caller's orders, newest first; `cursor` continues a listing."""
    limit = min(int(request.query.get("limit", DEFAULT_PAGE_SIZE)), MAX_PAGE_SIZE)
    cursor = request.query.get("cursor")
    repo = Repository(get_session(), "orders")
    rows = repo.page(owner=request.user.id, after=cursor, limit=limit + 1)
    serializer = OrderSerializer()
    more = len(rows) > limit
    return {
        "orders": [serializer.dump(row) for row in rows[:limit]],
        "next_cursor": rows[limit - 1].id if more else None,
    }


def create_order(request) -> dict:
    """Create an order. The total is computed here from the line items: a total sent by
    the client is ignored."""
    items = request.json["items"]
    amount_cents = sum(item["unit_cents"] * item["quantity"] for item in items)
    repo = Repository(get_session(), "orders")
    order = repo.add({"owner": request.user.id, "amount_cents": amount_cents, "items": items})
    return OrderSerializer().dump(order)
'''

ORDERS_ROUTES = """

def routes() -> list[tuple[str, str, object]]:
    return [
        ("GET", "/v1/orders", list_orders),
        ("GET", "/v2/orders", list_orders),
        ("POST", "/v2/orders", create_order),
    ]
"""


def _legacy_exports() -> str:
    """The CSV export endpoints the refactor removed (they made the old file long)."""
    out = []
    for column in (
        "status",
        "currency",
        "created_at",
        "customer_id",
        "amount_cents",
        "shipping_country",
        "coupon",
        "channel",
        "warehouse",
        "carrier",
    ):
        out.append(
            f"\n\ndef export_by_{column}(request) -> str:\n"
            f'    """CSV of the caller\'s orders grouped by {column} (v0 export)."""\n'
            f'    rows = Repository(get_session(), "orders").group_by("{column}")\n'
            f'    lines = ["{column},count,amount_cents"]\n'
            f"    for key, count, amount in rows:\n"
            f'        lines.append(f"{{key}},{{count}},{{amount}}")\n'
            f'    return "\\n".join(lines)\n'
        )
    return "".join(out)


AUTH = '''"""Login, access tokens and sessions."""

from __future__ import annotations

import time

import jwt
from argon2 import PasswordHasher

TOKEN_TTL_SECONDS = 900
_hasher = PasswordHasher(time_cost=3, memory_cost=65536)


class SessionStore:
    def __init__(self, db) -> None:
        self.db = db
        self.deny_list: dict[str, float] = {}

    def create(self, user_id: int) -> str:
        return self.db.insert_session(user_id)

    def revoke(self, token: str) -> None:
        """Delete the session row and deny the token until it would have expired anyway."""
        self.db.delete_session(token)
        self.deny_list[token] = time.time() + TOKEN_TTL_SECONDS

    def revoke_all(self, user_id: int) -> None:
        for token in self.db.sessions_of(user_id):
            self.revoke(token)


def issue_token(user_id: int, settings) -> str:
    claims = {"sub": str(user_id), "exp": int(time.time()) + TOKEN_TTL_SECONDS}
    return jwt.encode(claims, settings.jwt_signing_key, algorithm="HS256")


def login(request) -> dict:
    user = request.db.user_by_email(request.json["email"])
    _hasher.verify(user.password_hash, request.json["password"])
    return {"token": issue_token(user.id, request.settings)}


def change_password(request) -> dict:
    user = request.user
    request.db.set_password_hash(user.id, _hasher.hash(request.json["new_password"]))
    SessionStore(request.db).revoke_all(user.id)
    return {"ok": True}


def routes() -> list[tuple[str, str, object]]:
    return [("POST", "/v2/login", login), ("POST", "/v2/password", change_password)]
'''

DB_TEMPLATE = '''"""Database access: one session per request and a small repository over SQLAlchemy."""

from __future__ import annotations

import sys
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

POOL_SIZE = 10
_engine = None


def get_session() -> Session:
    global _engine
    if _engine is None:
        from app.config import parse_config

        _engine = create_engine(parse_config().database_url, pool_size=POOL_SIZE)
    return Session(_engine)


class Repository:
    def __init__(self, session: Session, table: str) -> None:
        self.session = session
        self.table = table

    def get(self, row_id: int):
        return self.session.execute(text(f"select * from {{self.table}} where id = :id"), {{"id": row_id}}).first()

    def {many}(self, ids: list[int]):
        return self.session.execute(text(f"select * from {{self.table}} where id = any(:ids)"), {{"ids": ids}}).all()

    def add(self, values: dict):
        return self.session.execute(text(f"insert into {{self.table}} values (:v)"), {{"v": values}})


def migrate(folder: str) -> None:
    """Apply every `*.sql` file of `folder` in name order (the names start with a date)."""
    session = get_session()
    for path in sorted(Path(folder).glob("*.sql")):
        session.execute(text(path.read_text()))
    session.commit()


if __name__ == "__main__" and sys.argv[1:2] == ["migrate"]:
    migrate(sys.argv[2])
'''

STRIPE = '''"""Card payments through Stripe. Amounts are integer cents, never floats."""

from __future__ import annotations

import os

import stripe


def _client() -> None:
    stripe.api_key = os.environ["STRIPE_SECRET_KEY"]


def charge(amount_cents: int, currency: str, source: str) -> str:
    """Charge once; a declined card raises and is not retried here."""
    _client()
    result = stripe.Charge.create(amount=amount_cents, currency=currency, source=source)
    return result["id"]


def refund(charge_id: str, amount_cents: int | None = None) -> str:
    _client()
    return stripe.Refund.create(charge=charge_id, amount=amount_cents)["id"]


def verify_webhook(payload: bytes, signature: str) -> dict:
    secret = os.environ["STRIPE_WEBHOOK_SECRET"]
    return stripe.Webhook.construct_event(payload, signature, secret)
'''

EMAILS = '''"""Order e-mails, sent from a worker pool so a request never waits on SMTP."""

from __future__ import annotations

import smtplib
from concurrent.futures import ThreadPoolExecutor
from email.message import EmailMessage

EMAIL_WORKERS = 4
_pool = ThreadPoolExecutor(max_workers=EMAIL_WORKERS)


def render_receipt(order) -> str:
    rows = "".join(f"<tr><td>{i['name']}</td><td>{i['quantity']}</td></tr>" for i in order.items)
    return f"<h1>Order {order.id}</h1><table>{rows}</table>"


def _send(to: str, html: str) -> None:
    message = EmailMessage()
    message["To"] = to
    message["Subject"] = "Your receipt"
    message.set_content(html, subtype="html")
    with smtplib.SMTP("localhost") as smtp:
        smtp.send_message(message)


def send_receipt(order, to: str) -> None:
    _pool.submit(_send, to, render_receipt(order))
'''

CLEANUP = '''"""Delete abandoned carts: `python -m app.tasks.cleanup --older-than-days N`."""

from __future__ import annotations

import argparse

from app.db import get_session


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--older-than-days", type=int, default=30)
    args = parser.parse_args()
    session = get_session()
    session.execute("delete from carts where updated_at < now() - :days * interval '1 day'",
                    {"days": args.older_than_days})
    session.commit()


if __name__ == "__main__":
    main()
'''

LEGACY_AUTH = '''"""HMAC-signed query strings for mobile clients older than 4.0."""

import hashlib
import hmac


def verify_signed_query(query: str, signature: str, secret: bytes) -> bool:
    expected = hmac.new(secret, query.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)
'''

SEED = '''"""Fill a local database with demo customers and orders."""

from app.db import Repository, get_session

DEMO_CUSTOMERS = 20


def seed() -> None:
    repo = Repository(get_session(), "customers")
    for n in range(DEMO_CUSTOMERS):
        repo.add({"email": f"demo{n}@example.test"})


if __name__ == "__main__":
    seed()
'''

RELEASE = """\
#!/bin/sh
# Tag a release vX.Y.Z and prepend its changelog entry, built from the Conventional
# Commit messages since the last tag.
set -eu
version="$1"
git-cliff --tag "v$version" --prepend CHANGELOG.md
git add CHANGELOG.md
git commit -m "chore(release): v$version"
git tag -a "v$version" -m "shopfront v$version"
"""

CRON = """\
jobs:
  - name: cleanup-carts
    schedule: "0 2 * * *"   # 02:00 UTC
    command: python -m app.tasks.cleanup --older-than-days 30
"""

REGIONS = """\
staging:
  region: eu-west-1
  db_pool_size: 5
production:
  region: us-east-1
  db_pool_size: 10
"""

DOCKERFILE = """\
FROM python:3.11-slim@sha256:2b7f3c1d9e4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c
WORKDIR /srv
COPY . .
RUN pip install --no-cache-dir .
CMD ["python", "-m", "app.main", "--port", "8000"]
"""

COMPOSE = """\
services:
  postgres:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: postgres
    ports: ["5432:5432"]
  redis:
    image: redis:7
    ports: ["6379:6379"]
"""

ENV_EXAMPLE = """\
DATABASE_URL=postgresql://shop:shop@localhost:5432/shop
STRIPE_SECRET_KEY=changeme
STRIPE_WEBHOOK_SECRET=changeme
JWT_SIGNING_KEY=changeme
"""

MIGRATION_ORDERS = "create index orders_customer_created on orders (customer_id, created_at);\n"
MIGRATION_PAYMENTS = "create index payments_order on payments (order_id);\n"

WEB_PACKAGE = """\
{
  "name": "shopfront-web",
  "private": true,
  "scripts": {
    "build": "vite build --outDir dist",
    "test": "vitest run",
    "format": "prettier --write src"
  }
}
"""

API_TS = """\
export const API_BASE = "/v2";

export interface Order {
  id: number;
  status: string;
  amount_cents: number;
  currency: string;
}

export async function fetchOrders(cursor?: string): Promise<{ orders: Order[]; next_cursor: string | null }> {
  const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : "";
  const response = await fetch(`${API_BASE}/orders${query}`, { credentials: "include" });
  if (!response.ok) throw new Error(`orders: ${response.status}`);
  return response.json();
}
"""

POLL_TS = """\
import { fetchOrders } from "./api";

export const POLL_INTERVAL_MS = 30_000;

export function pollPendingOrder(onUpdate: (status: string) => void): () => void {
  const timer = setInterval(async () => {
    const page = await fetchOrders();
    if (page.orders.length) onUpdate(page.orders[0].status);
  }, POLL_INTERVAL_MS);
  return () => clearInterval(timer);
}

export function pollAdminTable(render: (rows: unknown[]) => void): () => void {
  const timer = setInterval(async () => render((await fetchOrders()).orders), POLL_INTERVAL_MS);
  return () => clearInterval(timer);
}
"""


def _format_ts(name: str) -> str:
    return f"""\
export function {name}(amountCents: number, currency: string, locale = navigator.language): string {{
  return new Intl.NumberFormat(locale, {{ style: "currency", currency }}).format(amountCents / 100);
}}
"""


CART_TS = """\
export const CART_KEY = "shopfront.cart.v2";

export interface CartItem {
  sku: string;
  quantity: number;
}

export class CartStore {
  private items: CartItem[] = [];

  load(): void {
    this.items = JSON.parse(localStorage.getItem(CART_KEY) ?? "[]");
  }

  addItem(sku: string, quantity = 1): void {
    const found = this.items.find((item) => item.sku === sku);
    if (found) found.quantity += quantity;
    else this.items.push({ sku, quantity });
    localStorage.setItem(CART_KEY, JSON.stringify(this.items));
  }
}"""

TEST_ORDERS = """from app.api.orders import create_order, list_orders


def test_total_ignores_client_total(fake_request):
    request = fake_request(json={"items": [{"unit_cents": 250, "quantity": 2}], "total": 1})
    assert create_order(request)["amount_cents"] == 500


def test_first_page_has_default_size(fake_request, orders_60):
    assert len(list_orders(fake_request(query={}))["orders"]) == 50
"""

TEST_RATELIMIT = """from app.ratelimit import TokenBucket


def test_bucket_empties_after_burst():
    bucket = TokenBucket(rate=60, burst=2)
    assert bucket.take() and bucket.take()
    assert not bucket.take()
"""

FAKES = '''"""In-memory stand-ins used by the unit tests."""


class FakeRepository:
    def __init__(self) -> None:
        self.rows: dict[int, dict] = {}

    def get(self, row_id: int):
        return self.rows.get(row_id)

    def add(self, values: dict):
        row_id = len(self.rows) + 1
        self.rows[row_id] = {"id": row_id, **values}
        return self.rows[row_id]
'''

CONFTEST = """import pytest

from tests.fakes import FakeRepository


@pytest.fixture
def repo():
    return FakeRepository()
"""

ORDERS_BEFORE = ORDERS_CORE + _legacy_exports() + ORDERS_ROUTES
ORDERS_AFTER = ORDERS_CORE + ORDERS_ROUTES

BEFORE: dict[str, str] = {
    "pyproject.toml": PYPROJECT,
    "Makefile": MAKEFILE,
    ".gitignore": GITIGNORE,
    ".env.example": ENV_EXAMPLE,
    "Dockerfile": DOCKERFILE,
    "docker-compose.yml": COMPOSE,
    "app/__init__.py": "",
    "app/main.py": MAIN_TEMPLATE.format(flag="--reload", attr="reload"),
    "app/config.py": CONFIG_BEFORE,
    "app/http_client.py": HTTP_BEFORE,
    "app/ratelimit.py": RATELIMIT_BEFORE,
    "app/db.py": DB_TEMPLATE.format(many="get_many"),
    "app/legacy_auth.py": LEGACY_AUTH,
    "app/api/__init__.py": "",
    "app/api/orders.py": ORDERS_BEFORE,
    "app/api/auth.py": AUTH,
    "app/payments/__init__.py": "",
    "app/payments/stripe_client.py": STRIPE,
    "app/tasks/__init__.py": "",
    "app/tasks/emails.py": EMAILS,
    "app/tasks/cleanup.py": CLEANUP,
    "scripts/release.sh": RELEASE,
    "scripts/seed_db.py": SEED,
    "deploy/cron.yaml": CRON,
    "deploy/regions.yaml": REGIONS,
    "migrations/20260114_add_orders_index.sql": MIGRATION_ORDERS,
    "migrations/20260203_add_payments_index.sql": MIGRATION_PAYMENTS,
    "web/package.json": WEB_PACKAGE,
    "web/src/api.ts": API_TS,
    "web/src/poll.ts": POLL_TS,
    "web/src/format.ts": _format_ts("formatPrice"),
    "web/src/cart.ts": CART_TS,
    "tests/__init__.py": "",
    "tests/conftest.py": CONFTEST,
    "tests/fakes.py": FAKES,
    "tests/test_orders.py": TEST_ORDERS,
    "tests/test_ratelimit.py": TEST_RATELIMIT.replace(
        "TokenBucket(rate=60, burst=2)", "RateLimiter(rate=2)"
    )
    .replace("from app.ratelimit import TokenBucket", "from app.ratelimit import RateLimiter")
    .replace(
        "assert bucket.take() and bucket.take()\n    assert not bucket.take()",
        'assert bucket.allow("k") and bucket.allow("k")\n    assert not bucket.allow("k")',
    ),
}

AFTER: dict[str, str | None] = {
    "app/main.py": MAIN_TEMPLATE.format(flag="--watch", attr="watch"),
    "app/config.py": CONFIG_AFTER,
    "app/http_client.py": HTTP_AFTER,
    "app/ratelimit.py": RATELIMIT_AFTER,
    "app/db.py": DB_TEMPLATE.format(many="get_all"),
    "app/legacy_auth.py": None,
    "app/api/orders.py": ORDERS_AFTER,
    "scripts/seed_db.py": None,
    "tools/seed_db.py": SEED,
    "docker-compose.yml": None,
    "compose.yaml": COMPOSE,
    "web/src/format.ts": _format_ts("formatMoney"),
    "tests/test_ratelimit.py": TEST_RATELIMIT,
}

NOTES: list[tuple[str, str, bool]] = [
    ("objective", "Add per-key rate limiting to the public API", False),
    ("objective", "Phase 2 done; phase 3 (Retry-After header) next", True),
    ("blockers", "Need the production Redis endpoint from ops", False),
    ("pending", "Keep p95 latency of list_orders under 200 ms", False),
    ("pending", "Modified app/ratelimit.py and tests/test_ratelimit.py", True),
    ("pending", "Phase out the legacy HMAC auth for old mobile clients", False),
    ("pending", "Make the test suite pass on Python 3.12", False),
]


def _b64(data: dict[str, object]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


ADMIN_JWT = ".".join(
    (
        _b64({"alg": "HS256", "typ": "JWT"}),
        _b64({"sub": "1", "role": "admin", "exp": 4102444800}),
        "Xq3r9VbT2kLmN8pW4sYc7dFh1jGz6AeR0uI5oK2wQ3E",
    )
)


def lines(code: dict[str, str], path: str) -> int:
    return code[path].count("\n")


def describe(s: Store, code: dict[str, str]) -> None:
    add, plant, clean = s.add, s.plant, s.clean
    why_gate = "Every phase gate runs it"

    # ---------------------------------------------------------------- near-duplicates
    a, b = add(
        Mem(
            "test-command",
            "reference",
            "How to run the backend tests",
            (
                "Run the backend tests with `make test`; it runs pytest and skips the tests marked slow.",
                "The backend test command is `make test`: pytest without the slow-marked tests.",
            ),
            subject="test command",
            reason=why_gate,
            cite=("Makefile", "pyproject.toml"),
            age=40,
        ),
        Mem(
            "backend-tests-make",
            "reference",
            "Backend tests run through make",
            (
                "Backend tests are run with `make test`, which calls pytest and skips the slow-marked tests.",
                "Use `make test` to run the backend tests; it calls pytest and leaves out tests marked slow.",
            ),
            subject="Test command",
            reason="Needed before every commit",
            cite=("Makefile",),
            age=3,
        ),
    )
    plant("near_duplicate", a, b, note="same command, reworded")

    a, b = add(
        Mem(
            "orders-page-size",
            "project",
            "Default page size of the orders listing",
            (
                "`list_orders()` returns 50 orders per page by default; the next page is asked for with the cursor query parameter.",
            ),
            subject="order list pagination",
            reason="Clients rely on the page size",
            cite=(("app/api/orders.py", None, "list_orders"), "app/config.py"),
            age=60,
        ),
        Mem(
            "orders-pagination",
            "project",
            "How the orders listing pages",
            (
                "By default `list_orders()` pages at 50 orders, and a client fetches the next page by passing the cursor query parameter.",
                "Pages of `list_orders()` hold 50 orders by default; clients get the next page by passing the cursor query parameter.",
            ),
            subject="order list pagination",
            reason="The web client depends on it",
            cite=("app/api/orders.py",),
            age=5,
        ),
    )
    plant("near_duplicate", a, b, note="paraphrase, same values")

    a, b = add(
        Mem(
            "money-in-cents",
            "project",
            "Money is integer cents",
            "Money amounts are stored as integer cents (`amount_cents`), never as floats.",
            subject="money amounts",
            reason="Float rounding once lost a cent per refund",
            cite=("app/payments/stripe_client.py",),
            age=90,
        ),
        Mem(
            "amounts-integer-cents",
            "feedback",
            "Keep amounts in cents",
            (
                "Store every amount as integer cents (`amount_cents`); never use floats for money.",
                "Amounts must be kept in integer cents (`amount_cents`): floats are never used for money.",
            ),
            subject="Money amounts",
            reason="Rounding errors in refunds",
            age=12,
        ),
    )
    plant("near_duplicate", a, b, note="rule restated as feedback")

    a, b = add(
        Mem(
            "migrations-layout",
            "reference",
            "Where migrations live and how they run",
            "Database migrations live in `migrations/` as plain SQL files named by date, and `make migrate` applies them.",
            subject="database migrations",
            reason="Every schema change goes through it",
            cite=("Makefile", "migrations/20260114_add_orders_index.sql"),
            age=70,
        ),
        Mem(
            "sql-migrations",
            "reference",
            "SQL migrations and make migrate",
            (
                "Schema migrations are plain SQL files in `migrations/`, named by date; `make migrate` applies them in name order.",
                "`make migrate` applies the plain SQL files of `migrations/` in name order; their names start with the date.",
            ),
            subject="database migrations",
            reason="Schema changes",
            cite=("app/db.py",),
            age=8,
        ),
    )
    plant("near_duplicate", a, b, note="paraphrase, one adds the ordering")

    a, b = add(
        Mem(
            "receipts-background",
            "project",
            "Receipts are sent in the background",
            "Receipt e-mails are rendered by `render_receipt()` and sent by `send_receipt()` from a worker pool, never inside the request.",
            subject="receipt emails",
            reason="SMTP stalls once froze checkout",
            cite=("app/tasks/emails.py",),
            age=30,
        ),
        Mem(
            "send-receipt-pool",
            "project",
            "send_receipt uses a worker pool",
            (
                "`send_receipt()` hands the e-mail to a worker pool (never sends inside the request) and builds the HTML with `render_receipt()`.",
                "Receipts: `send_receipt()` submits the mail to a worker pool instead of sending inside the request, with HTML from `render_receipt()`.",
            ),
            subject="receipt emails",
            reason="Checkout must not wait on SMTP",
            cite=("app/tasks/emails.py",),
            age=2,
        ),
    )
    plant("near_duplicate", a, b, note="clauses reordered")

    a, b, c = add(
        Mem(
            "web-build",
            "reference",
            "Where the web build goes",
            "The web app builds into `web/dist/` with `npm run build`.",
            subject="web build output",
            reason="Deploys ship that folder",
            cite=("web/package.json",),
            age=100,
        ),
        Mem(
            "web-bundle-location",
            "reference",
            "The web bundle's folder",
            (
                "`npm run build` in `web/` writes the bundle to `web/dist/`.",
                "Running `npm run build` inside `web/` puts the bundle in `web/dist/`.",
            ),
            subject="web build output",
            reason="Deploys ship it",
            cite=("web/package.json",),
            age=50,
        ),
        Mem(
            "web-dist-served",
            "reference",
            "The web bundle and who serves it",
            "`npm run build` (run in `web/`) writes the production bundle to `web/dist/`, which the Python app serves as static files from `STATIC_DIR`.",
            subject="web build output",
            reason="Deploys ship that folder and the app serves it",
            cite=(("web/package.json", 6), ("app/main.py", 11, "STATIC_DIR")),
            age=1,
        ),
    )
    plant("near_duplicate", a, c, note="triple; keeper is the most specific and newest")
    plant("near_duplicate", b, c, note="triple; keeper is the most specific and newest")

    # look-alikes
    a, b = add(
        Mem(
            "api-rate-limit",
            "project",
            "Public API rate limit",
            "The public API allows 100 requests per minute per API key (`DEFAULT_RATE`), with bursts of 20.",
            subject="api rate limit",
            reason="Partners size their batch jobs to it",
            cite=(("app/ratelimit.py", None, "DEFAULT_RATE"),),
            age=20,
        ),
        Mem(
            "rate-limit-response",
            "project",
            "What a limited request gets back",
            "A request over the API rate limit gets HTTP 429 with a Retry-After header computed by `TokenBucket.retry_after_seconds()`.",
            subject="API rate limit",
            reason="Clients back off on it",
            cite=("app/ratelimit.py",),
            age=4,
        ),
    )
    clean("near_duplicate", a, b, note="same subject, different facts")
    clean("contradiction", a, b, note="same subject, other aspects")

    a, b = add(
        Mem(
            "staging-region",
            "project",
            "Region of staging",
            "Staging deploys go to the eu-west-1 region.",
            subject="staging region",
            reason="Latency tests assume it",
            cite=("deploy/regions.yaml",),
            age=15,
        ),
        Mem(
            "production-region",
            "project",
            "Region of production",
            "Production deploys go to the us-east-1 region.",
            subject="production region",
            reason="Data residency",
            cite=("deploy/regions.yaml",),
            age=15,
        ),
    )
    clean("near_duplicate", a, b, note="same template, other subject and value")
    clean("contradiction", a, b, note="other subjects")

    a = Mem(
        "checkout-polling",
        "project",
        "The checkout page polls order status",
        "The checkout page polls `fetchOrders()` every 30 seconds (`POLL_INTERVAL_MS`) while an order is pending.",
        subject="order status polling",
        reason="Payment confirmation is asynchronous",
        cite=(("web/src/poll.ts", None, "pollPendingOrder"),),
        age=25,
    )
    b = Mem(
        "admin-table-polling",
        "project",
        "The admin table polls orders",
        "The admin dashboard polls `fetchOrders()` every 30 seconds (`POLL_INTERVAL_MS`) to refresh its table.",
        subject="admin order polling",
        reason="Support staff watch it live",
        cite=(("web/src/poll.ts", None, "pollAdminTable"),),
        age=6,
        fm={
            "distinct_from": [
                {
                    "name": "checkout-polling",
                    "reason": "one is the checkout page, the other the admin dashboard",
                }
            ]
        },
    )
    add(a, b)
    clean("near_duplicate", a, b, note="look-alike created on purpose, with distinct_from")

    old = Mem(
        "upload-limit-10mb",
        "project",
        "Upload size limit",
        "Uploads are limited to 10 MB (`MAX_UPLOAD_MB`).",
        subject="upload size limit",
        reason="Reverse proxy buffer size",
        cite=("app/config.py",),
        batch=1,
        age=120,
        fm={"status": "superseded", "superseded_by": "upload-limit"},
    )
    new = Mem(
        "upload-limit",
        "project",
        "Upload size limit",
        "Uploads are limited to 25 MB (`MAX_UPLOAD_MB`); larger files go through the presigned S3 flow.",
        subject="upload size limit",
        reason="Reverse proxy buffer size",
        cite=(("app/config.py", None, "MAX_UPLOAD_MB"),),
        age=10,
        fm={"supersedes": ["upload-limit-10mb"]},
    )
    add(old, new)
    clean("near_duplicate", old, new, note="superseded, not active")
    clean("contradiction", old, new, note="one supersedes the other")

    a = Mem(
        "session-revocation",
        "project",
        "What revoking a session does",
        "`SessionStore.revoke()` deletes the session row and puts the token on the deny-list until it would have expired.",
        subject="session revocation",
        reason="Logout must be immediate",
        cite=(("app/api/auth.py", None, "SessionStore.revoke"),),
        age=33,
    )
    b = Mem(
        "password-change-revokes",
        "project",
        "A password change logs out everywhere",
        "A password change revokes every session of the user through `SessionStore.revoke_all()`.",
        subject="session revocation on password change",
        reason="Stolen sessions must die with the old password",
        cite=(("app/api/auth.py", None, "change_password"),),
        age=9,
    )
    add(a, b)
    clean("near_duplicate", a, b, note="a more specific subject is another fact")

    a = Mem(
        "orders-index",
        "project",
        "Index on orders",
        "The orders table has an index on (customer_id, created_at), added by `migrations/20260114_add_orders_index.sql`.",
        subject="orders table index",
        reason="The listing query needs it",
        cite=("migrations/20260114_add_orders_index.sql",),
        age=44,
    )
    b = Mem(
        "payments-index",
        "project",
        "Index on payments",
        "The payments table has an index on (order_id), added by `migrations/20260203_add_payments_index.sql`.",
        subject="payments table index",
        reason="Refund lookups need it",
        cite=("migrations/20260203_add_payments_index.sql",),
        age=30,
    )
    add(a, b)
    clean("near_duplicate", a, b, note="parallel facts about two tables")

    # ---------------------------------------------------------------- contradictions
    a, b = add(
        Mem(
            "http-timeout",
            "project",
            "Timeout of outbound HTTP calls",
            (
                "Outbound HTTP calls time out after 30 seconds (`REQUEST_TIMEOUT_SECONDS`).",
                "`fetch_document()` gives up on an outbound call after 30 seconds (`REQUEST_TIMEOUT_SECONDS`).",
            ),
            subject="HTTP client timeout",
            reason="Payment provider calls can be slow",
            cite=(("app/config.py", None, "REQUEST_TIMEOUT_SECONDS"),),
            age=50,
        ),
        Mem(
            "http-timeout-short",
            "project",
            "Outbound HTTP timeout",
            (
                "Outbound HTTP requests use a 10 second timeout.",
                "Every outbound HTTP call is cut off after 10 seconds.",
            ),
            subject="http client timeout",
            reason="Keeps workers free",
            cite=("app/http_client.py",),
            age=7,
        ),
    )
    plant("contradiction", a, b, note="30 vs 10 seconds")

    a, b = add(
        Mem(
            "python-version",
            "project",
            "Python version in production",
            "The service runs on Python 3.11 in production (the Dockerfile's base image).",
            subject="python version",
            reason="Syntax and wheels depend on it",
            cite=("Dockerfile",),
            age=80,
        ),
        Mem(
            "python-312",
            "project",
            "Production Python",
            ("Production runs Python 3.12.", "The production containers use Python 3.12."),
            subject="Python version",
            reason="New syntax is allowed",
            cite=("Dockerfile",),
            age=14,
        ),
    )
    plant("contradiction", a, b, note="3.11 vs 3.12")

    a, b = add(
        Mem(
            "token-in-cookie",
            "project",
            "Where the web client keeps its token",
            "The web client keeps the access token in an HttpOnly cookie, so scripts cannot read it.",
            subject="access token storage",
            reason="XSS hardening",
            cite=("web/src/api.ts",),
            age=45,
        ),
        Mem(
            "token-in-localstorage",
            "project",
            "Access token storage in the browser",
            (
                "The web client stores the access token in localStorage.",
                "In the browser the access token is saved in localStorage.",
            ),
            subject="access token storage",
            reason="The SPA reads it on load",
            cite=("web/src/api.ts",),
            age=11,
        ),
    )
    plant("contradiction", a, b, note="cookie vs localStorage, different verbs")

    a, b = add(
        Mem(
            "releases-from-main",
            "project",
            "Which branch releases come from",
            "Releases are cut from the main branch.",
            subject="release branch",
            reason="The deploy job builds tags on it",
            cite=("scripts/release.sh",),
            age=66,
        ),
        Mem(
            "releases-from-release-branch",
            "project",
            "Release branch",
            (
                "Releases are cut from the release branch, never from main.",
                "Cut every release from the release branch; main is never released directly.",
            ),
            subject="release branch",
            reason="Main moves too fast",
            cite=("scripts/release.sh",),
            age=13,
        ),
    )
    plant("contradiction", a, b, note="main vs release branch")

    a, b = add(
        Mem(
            "no-db-mocks",
            "feedback",
            "Tests use a real database",
            "Do not mock the database in tests; use the SQLite test database.",
            subject="test database",
            reason="Mocked tests passed while a migration broke production",
            age=55,
        ),
        Mem(
            "mock-db-in-unit-tests",
            "feedback",
            "Unit tests fake the database",
            (
                "Mock the database layer in unit tests with `FakeRepository`.",
                "Unit tests should mock the database with `FakeRepository` instead of a real one.",
            ),
            subject="test database",
            reason="Unit tests must run in milliseconds",
            age=6,
        ),
    )
    plant("contradiction", a, b, note="negation against a positive rule")

    a, b = add(
        Mem(
            "charge-retries",
            "project",
            "Declined charges are retried",
            "Failed card charges are retried 3 times, one minute apart.",
            subject="card charge retries",
            reason="Transient declines are common",
            cite=(("app/payments/stripe_client.py", None, "charge"),),
            age=35,
        ),
        Mem(
            "charge-no-retry",
            "project",
            "Declined charges are not retried",
            (
                "Failed card charges are never retried; the customer has to submit the payment again.",
                "A failed card charge is not retried: the customer must pay again.",
            ),
            subject="card charge retries",
            reason="Retries caused double charges",
            cite=(("app/payments/stripe_client.py", None, "charge"),),
            age=5,
        ),
    )
    plant("contradiction", a, b, note="3 retries vs never")

    # look-alikes
    a, b = add(
        Mem(
            "python-formatting",
            "feedback",
            "Python formatter",
            "Python code is formatted with `ruff format`.",
            subject="code formatting",
            reason="One style, no review comments about it",
            age=70,
        ),
        Mem(
            "typescript-formatting",
            "feedback",
            "TypeScript formatter",
            "TypeScript code is formatted with `npx prettier --write src`.",
            subject="code formatting",
            reason="One style for the web code",
            age=22,
        ),
    )
    clean("contradiction", a, b, note="same subject, different languages")

    a, b = add(
        Mem(
            "get-retries",
            "project",
            "Which requests are retried",
            "Idempotent GET requests are retried on 502, 503 and 504 (`RETRYABLE_STATUSES`).",
            subject="HTTP retries",
            reason="Upstreams restart often",
            cite=(("app/http_client.py", None, "RETRYABLE_STATUSES"),),
            age=40,
        ),
        Mem(
            "post-not-retried",
            "project",
            "POST is never retried",
            "POST requests are never retried by `fetch_document()`.",
            subject="http retries",
            reason="A retried POST can double an order",
            cite=(("app/http_client.py", None, "fetch_document"),),
            age=18,
        ),
    )
    clean("contradiction", a, b, note="compatible: GET retried, POST not")

    old = Mem(
        "session-lifetime-30",
        "project",
        "Session lifetime",
        "Sessions expire after 30 minutes.",
        subject="session lifetime",
        reason="Security review",
        cite=("app/api/auth.py",),
        batch=1,
        age=150,
        fm={"status": "superseded", "superseded_by": "session-lifetime"},
    )
    new = Mem(
        "session-lifetime",
        "project",
        "Session lifetime",
        "Sessions expire after 15 minutes (`TOKEN_TTL_SECONDS` is 900).",
        subject="session lifetime",
        reason="Security review asked for a shorter window",
        cite=(("app/api/auth.py", None, "TOKEN_TTL_SECONDS"),),
        age=16,
        fm={"supersedes": ["session-lifetime-30"]},
    )
    add(old, new)
    clean("contradiction", old, new, note="superseded")

    a, b = add(
        Mem(
            "deploy-branch",
            "project",
            "Deploys build from main",
            "Deploys run from the main branch.",
            subject="deploys",
            reason="Nothing else is deployed",
            cite=("scripts/release.sh",),
            age=60,
        ),
        Mem(
            "deploy-waits-e2e",
            "project",
            "Deploys wait for e2e",
            "A deploy waits for the end-to-end test job to pass before it starts.",
            subject="deploys",
            reason="Broken checkouts reached production twice",
            cite=("Makefile",),
            age=21,
        ),
    )
    clean("contradiction", a, b, note="same subject, other aspects")
    clean("near_duplicate", a, b, note="same subject, other aspects")

    a, b = add(
        Mem(
            "staging-db-pool",
            "project",
            "Staging database pool",
            "The staging database pool holds 5 connections.",
            subject="staging db pool",
            reason="Staging has a small instance",
            cite=("deploy/regions.yaml",),
            age=28,
        ),
        Mem(
            "production-db-pool",
            "project",
            "Production database pool",
            "The production database pool holds 10 connections (`POOL_SIZE`).",
            subject="production db pool",
            reason="Sized for 4 workers",
            cite=(("app/db.py", None, "POOL_SIZE"),),
            age=28,
        ),
    )
    clean("contradiction", a, b, note="different subjects, different numbers")
    clean("near_duplicate", a, b, note="different subjects, different numbers")

    # ---------------------------------------------------------------- stale claims
    m = Mem(
        "rate-limiter-buckets",
        "project",
        "Where rate-limit buckets live",
        (
            "`RateLimiter` in `app/ratelimit.py` keeps one bucket per API key.",
            "The `RateLimiter` class keeps a bucket for each API key.",
        ),
        subject="rate limiter state",
        reason="Memory grows with keys",
        cite=(("app/ratelimit.py", None, "RateLimiter"),),
        batch=1,
        age=110,
    )
    add(m)
    plant("stale_citation", m, note="class renamed to TokenBucket")

    m = Mem(
        "legacy-mobile-auth",
        "project",
        "Old mobile clients authenticate differently",
        (
            "Mobile clients older than 4.0 authenticate through `app/legacy_auth.py`, which checks HMAC-signed query strings.",
        ),
        subject="legacy mobile auth",
        reason="Removing it breaks old apps",
        cite=("app/legacy_auth.py",),
        batch=1,
        age=130,
    )
    add(m)
    plant("stale_citation", m, note="file deleted")

    m = Mem(
        "price-formatting",
        "reference",
        "How prices are formatted in the browser",
        (
            "Prices in the web app are formatted by `formatPrice()` with the user's locale and the order currency.",
            "`formatPrice()` formats every price in the web app with the browser locale and the order's currency.",
        ),
        subject="price formatting",
        reason="Consistent prices across pages",
        cite=("web/src/format.ts",),
        batch=1,
        age=95,
    )
    add(m)
    plant("stale_citation", m, note="TypeScript function renamed")

    m = Mem(
        "seed-local-db",
        "reference",
        "Seeding a local database",
        "Seed a local database with `scripts/seed_db.py`; it creates 20 demo customers.",
        subject="local seed data",
        reason="New developers need data",
        cite=("tools/seed_db.py",),
        batch=1,
        age=88,
    )
    add(m)
    plant("stale_citation", m, note="backticked path moved to tools/")

    m = Mem(
        "order-total-server",
        "project",
        "Totals are computed by the server",
        "Order totals are computed server-side in `create_order()`; a total sent by the client is ignored.",
        subject="order totals",
        reason="Clients once sent a total of 1 cent",
        cite=(("app/api/orders.py", 140, "create_order"),),
        batch=1,
        age=77,
    )
    add(m)
    plant("stale_citation", m, note="cited line past the end of the shortened file")

    m = Mem(
        "local-services",
        "reference",
        "Local Postgres and Redis",
        (
            "Local Postgres and Redis start from the services in `docker-compose.yml`.",
            "`docker-compose.yml` defines the local Postgres and Redis services.",
        ),
        subject="local services",
        reason="Integration tests need them",
        cite=("compose.yaml",),
        batch=1,
        age=140,
    )
    add(m)
    plant("stale_citation", m, note="bare file name renamed to compose.yaml")

    m = Mem(
        "repository-bulk-get",
        "feedback",
        "Load orders in one query",
        "Use `Repository.get_many()` to load orders in one query, not a loop over `Repository.get()`.",
        subject="bulk loading",
        reason="N+1 queries made the export slow",
        batch=1,
        age=85,
    )
    add(m)
    plant("stale_citation", m, note="method renamed to get_all")

    m = Mem(
        "dev-server-restart",
        "reference",
        "Restart on code changes",
        "The development server restarts on code changes when started with `--reload`.",
        subject="dev server",
        reason="Faster feedback",
        cite=("app/main.py",),
        batch=1,
        age=99,
    )
    add(m)
    plant("stale_citation", m, note="flag renamed to --watch")

    # look-alikes
    m = Mem(
        "fetch-page-redirects",
        "project",
        "fetch_page follows redirects",
        "`fetch_page()` follows at most 5 redirects (`MAX_REDIRECTS`).",
        subject="redirect limit",
        reason="A redirect loop once hung a worker",
        cite=(("app/http_client.py", None, "fetch_page"),),
        batch=1,
        age=100,
    )
    add(m)
    clean("stale_citation", m, note="renamed, old name kept as an alias")

    m = Mem(
        "release-wheels",
        "reference",
        "Where built wheels go",
        "`make release` tags the version; built wheels land in `dist/`, which is never committed.",
        subject="release artifacts",
        reason="Upload step reads it",
        cite=("Makefile",),
        age=27,
    )
    add(m)
    clean("stale_citation", m, note="git-ignored build output")

    m = Mem(
        "slow-tests-before-release",
        "feedback",
        "Run slow tests before releases",
        "Run `pytest -m slow` before a release; `git log --oneline -- migrations/` shows which schema changes it covers.",
        subject="release testing",
        reason="Slow tests catch migration problems",
        age=19,
    )
    add(m)
    clean("stale_citation", m, note="commands, not claims")
    clean("excluded_content", m, note="a durable tip that mentions git log")

    m = Mem(
        "settings-source",
        "project",
        "Settings come from the environment",
        "Settings come from `os.environ` only: `parse_config()` never reads files.",
        subject="settings source",
        reason="Twelve-factor deploys",
        cite=(("app/config.py", None, "parse_config"),),
        batch=1,
        age=105,
        record_verified=True,
    )
    add(m)
    clean("stale_citation", m, note="stdlib name; cited file changed but the claims hold")

    m = Mem(
        "email-pool",
        "project",
        "E-mail worker pool",
        "Receipts go through a `ThreadPoolExecutor` of `EMAIL_WORKERS` threads.",
        subject="email workers",
        reason="SMTP is slow",
        cite=("app/tasks/emails.py",),
        age=26,
    )
    add(m)
    clean("stale_citation", m, note="a class used, defined in the standard library")

    m = Mem(
        "cart-storage",
        "project",
        "Where the cart is kept",
        "`CartStore` persists the cart in localStorage under `CART_KEY`.",
        subject="cart persistence",
        reason="The cart survives reloads",
        cite=(("web/src/cart.ts", lines(code, "web/src/cart.ts") + 1, "CartStore"),),
        age=17,
    )
    add(m)
    clean("stale_citation", m, note="TypeScript symbol; cited line is the file's last")

    m = Mem(
        "cleanup-job",
        "reference",
        "Nightly cart cleanup",
        "The nightly cleanup job runs at 02:00 UTC (`deploy/cron.yaml`) and deletes carts older than 30 days (`--older-than-days`).",
        subject="cart cleanup",
        reason="The carts table grew to 40 GB",
        cite=("deploy/cron.yaml", "app/tasks/cleanup.py"),
        age=36,
    )
    add(m)
    clean("stale_citation", m, note="flag spelled in code")
    clean("excluded_content", m, note="a schedule time, not task state")

    # ---------------------------------------------------------------- save exclusions
    m = Mem(
        "double-charge-fix",
        "project",
        "The double-charge fix",
        (
            "Commit 4e1f9a2 fixed the double-charge bug in `charge()`.",
            "The double-charge bug in `charge()` was fixed in commit 4e1f9a2c.",
        ),
        subject="double charge bug",
        reason="Background",
        cite=("app/payments/stripe_client.py",),
        age=48,
    )
    add(m)
    plant("excluded_content", m, note="git history: a commit id")

    m = Mem(
        "auth-middleware-pr",
        "project",
        "Authentication moved",
        (
            "PR #212 moved authentication out of the handlers.",
            "Authentication was moved out of the handlers in pull request #212.",
        ),
        subject="authentication refactor",
        reason="Context",
        cite=("app/api/auth.py",),
        age=41,
    )
    add(m)
    plant("excluded_content", m, note="git history: a pull request")

    m = Mem(
        "ratelimit-iteration",
        "project",
        "Rate-limit task progress",
        (
            "Iteration 2 of the rate-limit work passed all gates at 14:32.",
            "The rate-limit task's second iteration passed the gates at 14:32.",
        ),
        subject="rate limit task",
        reason="Progress",
        cite=("app/ratelimit.py",),
        age=2,
    )
    add(m)
    plant("excluded_content", m, note="ephemeral task state")

    m = Mem(
        "orders-file-modified",
        "project",
        "Orders file changed",
        (
            "`app/api/orders.py` was modified to add cursor pagination.",
            "Cursor pagination was added by modifying `app/api/orders.py`.",
        ),
        subject="orders changes",
        reason="Track what changed",
        cite=("app/api/orders.py",),
        age=3,
    )
    add(m)
    plant("excluded_content", m, note="ephemeral: file X was modified")

    m = Mem(
        "parse-config-location",
        "reference",
        "Where parse_config is",
        (
            "`parse_config()` is defined in `app/config.py`.",
            "The function `parse_config()` lives in `app/config.py`.",
        ),
        subject="parse_config location",
        reason="Find it quickly",
        cite=("app/config.py",),
        age=58,
    )
    add(m)
    plant("excluded_content", m, note="derivable from the code")

    m = Mem(
        "db-module-size",
        "reference",
        "Size of app/db.py",
        f"`app/db.py` has {lines(code, 'app/db.py')} lines.",
        subject="db module size",
        reason="Background",
        cite=("app/db.py",),
        age=9,
    )
    add(m)
    plant("excluded_content", m, note="derivable: a line count")

    m = Mem(
        "cart-v2-merge",
        "project",
        "When cart v2 landed",
        (
            "The branch feature/cart-v2 was merged into main on 2026-09-14.",
            "feature/cart-v2 got merged to main on 2026-09-14.",
        ),
        subject="cart v2",
        reason="History",
        cite=("web/src/cart.ts",),
        age=64,
    )
    add(m)
    plant("excluded_content", m, note="git history: a merge")

    # look-alikes
    m = Mem(
        "release-tags",
        "reference",
        "How releases are tagged",
        "Releases are tagged vX.Y.Z by `scripts/release.sh`, which also prepends the changelog entry.",
        subject="release tagging",
        reason="The deploy job builds tags",
        cite=("scripts/release.sh",),
        age=75,
    )
    add(m)
    clean("excluded_content", m, note="durable fact that mentions tags")

    m = Mem(
        "no-force-push",
        "feedback",
        "Never force-push main",
        "Never force-push to the main branch: the deploy job builds every push to it.",
        subject="force push",
        reason="A force-push once redeployed an old build",
        age=90,
    )
    add(m)
    clean("excluded_content", m, note="a rule that names a branch")

    m = Mem(
        "parse-config-no-io",
        "feedback",
        "parse_config stays fast",
        "`parse_config()` in `app/config.py` must not do network I/O: the CLI imports it at start-up and must start in under 100 ms.",
        subject="config loading speed",
        reason="Slow start-up broke the health check",
        age=31,
    )
    add(m)
    clean("excluded_content", m, note="names where a function is, but carries a rule and a reason")

    m = Mem(
        "conventional-commits",
        "feedback",
        "Commit message format",
        "Commit messages follow Conventional Commits (feat:, fix:, chore:); `scripts/release.sh` builds the changelog from them.",
        subject="commit messages",
        reason="The changelog is generated",
        age=85,
    )
    add(m)
    clean("excluded_content", m, note="a convention about commits, not history")

    m = Mem(
        "migrations-append-only",
        "feedback",
        "Never edit a merged migration",
        "Migrations are append-only: once a file in `migrations/` is merged it is never edited; add a new one instead.",
        subject="migration edits",
        reason="Edited migrations never re-run in production",
        age=52,
    )
    add(m)
    clean("excluded_content", m, note="'merged' in a rule")

    m = Mem(
        "v1-orders-sunset",
        "project",
        "v1 orders API sunset",
        "The v1 orders endpoint is removed on 2027-03-01; until then `list_orders()` serves both /v1 and /v2.",
        subject="v1 api sunset",
        reason="Partners were promised the date",
        cite=(("app/api/orders.py", None, "routes"),),
        age=23,
    )
    add(m)
    clean("excluded_content", m, note="a dated commitment, not task state")

    # ---------------------------------------------------------------- secrets
    m = Mem(
        "stripe-staging-key",
        "reference",
        "Stripe key for staging",
        (
            "Staging charges cards with the Stripe key sk_live_51Hq3kQ2eZvKYlo2C8u3fTqYb (rotate after the audit).",
            "The staging environment talks to Stripe with sk_live_51Hq3kQ2eZvKYlo2C8u3fTqYb.",
        ),
        subject="stripe staging key",
        reason="Staging payments",
        cite=("app/payments/stripe_client.py",),
        age=37,
    )
    add(m)
    plant("secret", m, note="Stripe live secret key")

    m = Mem(
        "uploads-bucket-credentials",
        "reference",
        "Credentials of the uploads bucket",
        "The uploads bucket is written with access key id AKIAZ7Q4V3HLM2XKPD5N and secret key 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.",
        subject="uploads bucket access",
        reason="Presigned uploads need it",
        cite=("app/config.py",),
        age=46,
    )
    add(m)
    plant("secret", m, note="AWS key pair")

    m = Mem(
        "jwt-signing-key-dev",
        "reference",
        "JWT signing key of the shared dev stack",
        "The shared dev stack signs JWTs with the RSA key below.",
        subject="dev jwt key",
        reason="Debugging tokens",
        cite=("app/api/auth.py",),
        age=29,
        more="""```
-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun
VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK
LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo
9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ0iT9wCS0DRTXu269V264Vf/3jvre
-----END RSA PRIVATE KEY-----
```""",
    )
    add(m)
    plant("secret", m, note="private key block")

    m = Mem(
        "staging-admin-login",
        "reference",
        "Staging admin account",
        (
            "The staging admin account is admin@shopfront.test with password Qz7!mVr2#Lp9.",
            "Log in to staging as admin@shopfront.test, password Qz7!mVr2#Lp9.",
        ),
        subject="staging admin",
        reason="Support reproduces bugs there",
        cite=("app/api/auth.py",),
        age=19,
    )
    add(m)
    plant("secret", m, note="password stated in words")

    m = Mem(
        "slack-alerts-webhook",
        "reference",
        "Where alerts are posted",
        "Payment alerts are posted to https://hooks.slack.com/services/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.",
        subject="payment alerts",
        reason="On-call watches that channel",
        cite=("app/payments/stripe_client.py",),
        age=34,
    )
    add(m)
    plant("secret", m, note="Slack webhook URL carries its token")

    m = Mem(
        "sendgrid-key",
        "reference",
        "SendGrid API key",
        "Receipts are sent through SendGrid with the key 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.",
        subject="sendgrid key",
        reason="Receipts",
        cite=("app/tasks/emails.py",),
        age=39,
    )
    add(m)
    plant("secret", m, note="SendGrid key")

    m = Mem(
        "admin-bearer-token",
        "reference",
        "Calling the admin API by hand",
        f"Call the admin API with the header `Authorization: Bearer {ADMIN_JWT}` (an admin token that never expires).",
        subject="admin api access",
        reason="Support scripts",
        cite=("app/api/auth.py",),
        age=8,
    )
    add(m)
    plant("secret", m, note="a signed, non-expiring JWT")

    # look-alikes
    m = Mem(
        "stripe-key-shape",
        "reference",
        "Stripe keys are never committed",
        "Live Stripe keys look like sk_live_XXXXXXXXXXXXXXXXXXXXXXXX; they are read from `STRIPE_SECRET_KEY` and never committed.",
        subject="stripe key handling",
        reason="Leaked keys get charged",
        cite=("app/payments/stripe_client.py",),
        age=37,
    )
    add(m)
    clean("secret", m, note="placeholder key")

    m = Mem(
        "localstack-credentials",
        "reference",
        "Credentials for localstack",
        "The localstack setup uses AWS's documented example key AKIAIOSFODNN7EXAMPLE; localstack accepts any key.",
        subject="localstack credentials",
        reason="Local uploads",
        cite=("compose.yaml",),
        age=32,
    )
    add(m)
    clean("secret", m, note="AWS's published example key")

    m = Mem(
        "base-image-pin",
        "reference",
        "The pinned base image",
        "The Dockerfile pins python:3.11-slim by digest sha256:2b7f3c1d9e4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c; bump it with the monthly patch.",
        subject="base image",
        reason="Reproducible builds",
        cite=("Dockerfile",),
        age=27,
    )
    add(m)
    clean("secret", m, note="an image digest")

    m = Mem(
        "password-hashing",
        "project",
        "How passwords are stored",
        "Passwords are hashed with argon2id (time cost 3, 64 MiB); plain passwords are never logged or stored.",
        subject="password hashing",
        reason="Security review",
        cite=(("app/api/auth.py", None, "_hasher"),),
        age=61,
    )
    add(m)
    clean("secret", m, note="talks about passwords, holds none")

    m = Mem(
        "jwt-key-from-env",
        "project",
        "JWT signing key source",
        "The JWT signing key is read from `JWT_SIGNING_KEY` at start-up; tokens are signed with HS256.",
        subject="jwt signing",
        reason="Key rotation needs a restart",
        cite=("app/config.py", "app/api/auth.py"),
        age=43,
    )
    add(m)
    clean("secret", m, note="names the variable, not the value")

    m = Mem(
        "env-example",
        "reference",
        "The example environment file",
        "`.env.example` lists every variable with a dummy value such as STRIPE_SECRET_KEY=changeme; copy it to `.env`.",
        subject="environment file",
        reason="First-time set-up",
        cite=(".env.example",),
        age=66,
    )
    add(m)
    clean("secret", m, note="placeholder assignment")

    m = Mem(
        "partner-webhook-public-key",
        "reference",
        "Partner webhook signatures",
        "Partner webhooks are signed; verify them with the partner's public key below.",
        subject="partner webhook verification",
        reason="Unsigned calls are rejected",
        cite=("app/payments/stripe_client.py",),
        age=24,
        more="""```
-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo
4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u
-----END PUBLIC KEY-----
```""",
    )
    add(m)
    clean("secret", m, note="a public key")

    # ---------------------------------------------------------------- files that do not load
    fm_ok = "subject: deploys\nreason: Every release\ncitations:\n- path: Makefile\n"
    m = Mem(
        "deploy-steps",
        "reference",
        "",
        "",
        raw=(
            "---\nname: deploy-steps\ndescription: Deploys: how the app ships\ntype: reference\n"
            + fm_ok
            + "---\nDeploy with `make release` after the end-to-end job passes.\n"
        ),
    )
    add(m)
    plant("invalid_file", m, note="unquoted colon in a value")

    m = Mem(
        "checkout-flow",
        "project",
        "",
        "",
        raw=(
            "---\nname: checkout\ndescription: The checkout flow\ntype: project\nsubject: checkout\n"
            "reason: Core revenue path\ncitations:\n- path: app/api/orders.py\n---\n"
            "Checkout creates the order first, then charges the card with `charge()`.\n"
        ),
    )
    add(m)
    plant("invalid_file", m, note="name is not the file name")

    m = Mem(
        "refund-window",
        "project",
        "",
        "",
        raw=(
            "---\nname: refund-window\ndescription: How long refunds are allowed\nsubject: refunds\n"
            "reason: Support policy\ncitations:\n- path: app/payments/stripe_client.py\n---\n"
            "Refunds are allowed for 30 days after the charge.\n"
        ),
    )
    add(m)
    plant("invalid_file", m, note="no type")

    m = Mem(
        "use-postgres-16",
        "project",
        "",
        "",
        raw=(
            "---\nname: use-postgres-16\ndescription: Database engine choice\ntype: decision\n"
            "subject: database engine\nreason: JSON indexes\ncitations:\n- path: compose.yaml\n---\n"
            "The service uses Postgres 16.\n"
        ),
    )
    add(m)
    plant("invalid_file", m, note="unknown type")

    m = Mem(
        "cdn-caching",
        "project",
        "",
        "",
        raw=(
            "---\nname: cdn-caching\ndescription: CDN caching of the bundle\ntype: project\n"
            "subject: cdn caching\nreason: Cost\ncitations:\n- path: web/package.json\n\n"
            "The CDN caches `web/dist/` for one hour.\n"
        ),
    )
    add(m)
    plant("invalid_file", m, note="frontmatter never closed")

    m = Mem(
        "api-versioning",
        "project",
        "",
        "",
        raw=(
            "---\nname: api-versioning\ndescription: How the API is versioned\ntype: project\n"
            "subject: api versioning\nreason: Partners pin versions\ncitations: app/api/orders.py\n---\n"
            "The API version is the first path segment (/v1, /v2).\n"
        ),
    )
    add(m)
    plant("invalid_file", m, note="citations is a string")

    m = Mem(
        "smtp-relay",
        "reference",
        "",
        "",
        raw=(
            "---\nname: smtp-relay\ndescription: The SMTP relay\ntype: reference\nsubject: smtp relay\n"
            "reason: Receipts\ncitations:\n\t- path: app/tasks/emails.py\n---\n"
            "Receipts are relayed through the local SMTP server.\n"
        ),
    )
    add(m)
    plant("invalid_file", m, note="tab-indented YAML")

    # look-alikes that load
    m = Mem(
        "crlf-memory",
        "reference",
        "Written on Windows",
        "The web tests run with `npm test` inside `web/`.",
        subject="web tests",
        reason="CI runs them",
        cite=("web/package.json",),
        style="crlf",
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="CRLF line ends")

    m = Mem(
        "bom-memory",
        "reference",
        "Saved with a BOM",
        "The admin UI lives under /admin and uses the same `fetchOrders()` client.",
        subject="admin ui",
        reason="Shared client code",
        cite=("web/src/api.ts",),
        style="bom",
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="byte order mark")

    m = Mem(
        "quoted-colon",
        "reference",
        "Deploys: where they run",
        "Deploy jobs run in the shared CI runners, never on laptops.",
        subject="deploy runners",
        reason="Reproducible deploys",
        cite=("Makefile",),
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="colon in a quoted description")

    m = Mem(
        "flow-citations",
        "project",
        "Citations in flow style",
        "Orders above 10,000 EUR need a manual review before they ship.",
        subject="order review threshold",
        reason="Fraud losses",
        cite=(("app/api/orders.py", None, "create_order"),),
        style="flow",
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="flow-style citations and comments")

    m = Mem(
        "extra-keys",
        "project",
        "Unknown keys kept",
        "The support team owns the refund policy; engineering only implements `refund()`.",
        subject="refund ownership",
        reason="Policy questions go to support",
        cite=("app/payments/stripe_client.py",),
        fm={"tags": ["payments", "support"], "owner": "payments-team"},
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="keys orch does not know")

    m = Mem(
        "folded-description",
        "project",
        "A description folded over two lines in YAML that still reads as one line",
        "Guest checkout creates a customer without a password.",
        subject="guest checkout",
        reason="Conversion",
        cite=(("app/api/orders.py", None, "create_order"),),
        style="folded",
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="folded block scalar")

    m = Mem(
        "body-with-rules",
        "reference",
        "A body with horizontal rules",
        "Feature flags are read from the FLAGS environment variable as a comma-separated list.",
        subject="feature flags",
        reason="Toggling without deploys",
        cite=("app/config.py",),
        age=30,
        more="---\n\nExample:\n\n```yaml\n---\nFLAGS: new-checkout,fast-search\n```\n\n---",
    )
    add(m)
    clean("invalid_file", m, note="--- lines and YAML inside the body")

    # ---------------------------------------------------------------- missing fields
    m = Mem(
        "coupon-stacking",
        "project",
        "Coupons do not stack",
        "Only one coupon applies per order.",
        reason="Margin",
        cite=("app/api/orders.py",),
        omit=("subject",),
        age=30,
    )
    add(m)
    plant("missing_field", m, note="no subject")

    m = Mem(
        "currency-list",
        "project",
        "Supported currencies",
        "Orders accept EUR, USD and GBP.",
        subject="currencies",
        cite=("app/api/orders.py",),
        omit=("reason",),
        age=30,
    )
    add(m)
    plant("missing_field", m, note="no reason")

    m = Mem(
        "shipping-countries",
        "project",
        "Where we ship",
        "The shop ships to EU countries, the UK and Norway.",
        subject="shipping countries",
        reason="Carrier contracts",
        age=30,
    )
    add(m)
    plant("missing_field", m, note="project memory without citations")

    m = Mem(
        "vite-config",
        "reference",
        "Bundler",
        "The web bundle is built by Vite.",
        subject="bundler",
        reason="Fast builds",
        fm={"citations": []},
        age=30,
    )
    add(m)
    plant("missing_field", m, note="reference memory with an empty citation list")

    m = Mem(
        "empty-memory",
        "project",
        "A memory whose body was never written",
        "",
        subject="placeholder",
        reason="To be written",
        cite=("app/main.py",),
        age=30,
    )
    add(m)
    plant("missing_field", m, note="no fact")

    m = Mem(
        "testing-policy",
        "feedback",
        "Testing policy",
        "Every bug fix comes with a test that fails without it.",
        omit=("subject", "reason"),
        age=30,
    )
    add(m)
    plant("missing_field", m, note="Claude Code style: name, description and type only")

    # look-alikes
    m = Mem(
        "review-style",
        "feedback",
        "How to write review comments",
        "Review comments say what to change and why, in one sentence each.",
        subject="code review",
        reason="Long threads stall merges",
        age=30,
    )
    add(m)
    clean("missing_field", m, note="feedback needs no citations")

    m = Mem(
        "user-prefers-small-prs",
        "user",
        "The lead prefers small pull requests",
        "The lead reviews pull requests under 300 changed lines the same day; larger ones wait.",
        subject="pull request size",
        reason="Faster reviews",
        age=30,
    )
    add(m)
    clean("missing_field", m, note="user memory needs no citations")

    m = Mem(
        "multiline-reason",
        "project",
        "Reason over several lines",
        "Order e-mails are sent in the customer's language, falling back to English.",
        subject="email language",
        reason="Support tickets about unreadable e-mails\ndropped by half after this.",
        cite=("app/tasks/emails.py",),
        age=30,
    )
    add(m)
    clean("missing_field", m, note="reason as a multi-line scalar")

    m = Mem(
        "path-only-citation",
        "reference",
        "A citation with only a path",
        "Card payments go through Stripe's Python SDK.",
        subject="payment provider",
        reason="One provider to integrate",
        cite=("pyproject.toml",),
        age=30,
    )
    add(m)
    clean("missing_field", m, note="a citation with only a path")

    m = Mem(
        "quotes-in-description",
        "project",
        'It\'s the "fast" checkout path',
        "",
        raw=(
            '---\nname: quotes-in-description\ndescription: It\'s the "fast" checkout path\ntype: project\n'
            "subject: express checkout\nreason: Returning customers convert better\ncitations:\n"
            "- path: app/api/orders.py\n  symbol: create_order\n---\n"
            "Returning customers with a saved card skip the address step.\n"
        ),
    )
    add(m)
    clean("invalid_file", m, note="quotes inside a plain scalar")

    m = Mem(
        "directory-citation",
        "reference",
        "A citation of a folder",
        "Every SQL migration is idempotent: it uses create index if not exists or an equivalent guard.",
        subject="migration idempotence",
        reason="Re-running make migrate must be safe",
        cite=("migrations/",),
        age=30,
    )
    add(m)
    clean("missing_field", m, note="a folder as citation")

    m = Mem(
        "long-body",
        "project",
        "A memory with several paragraphs",
        "Refunds over 500 EUR need a second approver in the admin UI.",
        subject="refund approval",
        reason="Fraud by a single account",
        cite=(("app/payments/stripe_client.py", None, "refund"),),
        age=30,
        more="**Why:** one compromised support account refunded 40,000 EUR in a night.\n\n"
        "**How to apply:** never add a code path that calls `refund()` without the approval check.\n\n"
        "The approval is stored with the refund for the auditors.",
    )
    add(m)
    clean("missing_field", m, note="several paragraphs")

    m = Mem(
        "feedback-with-citation",
        "feedback",
        "Keep handlers thin",
        "Request handlers only parse and serialize; business rules live in functions a test can call directly.",
        subject="handler design",
        reason="Handlers were untestable",
        cite=("app/api/orders.py",),
        age=30,
    )
    add(m)
    clean("missing_field", m, note="feedback with an optional citation")

    ordinary(s)


def ordinary(s: Store) -> None:
    """Plain, clean memories (the small index and NOTES.md repositories reuse them)."""
    s.add(
        Mem(
            "login-endpoint",
            "reference",
            "Login endpoint",
            "`login()` answers POST /v2/login with a JWT from `issue_token()`.",
            subject="login endpoint",
            reason="Mobile clients call it",
            cite=("app/api/auth.py",),
            age=80,
        ),
        Mem(
            "partial-refunds",
            "project",
            "Partial refunds",
            "`refund()` refunds the whole charge unless an amount in cents is given.",
            subject="partial refunds",
            reason="Support issues partial refunds",
            cite=(("app/payments/stripe_client.py", None, "refund"),),
            age=80,
        ),
        Mem(
            "ruff-line-length",
            "reference",
            "Line length",
            "Python lines may be 100 characters long (`pyproject.toml`).",
            subject="line length",
            reason="ruff enforces it",
            cite=("pyproject.toml",),
            age=80,
        ),
        Mem(
            "web-api-base",
            "reference",
            "Base path of the browser client",
            "The browser client calls the API under `API_BASE` (/v2) with cookies included.",
            subject="web api base",
            reason="Proxies route on it",
            cite=(("web/src/api.ts", None, "API_BASE"),),
            age=80,
        ),
        Mem(
            "serializer-fields",
            "project",
            "Fields an order exposes",
            "`OrderSerializer` exposes id, status, amount_cents, currency and created_at, nothing else.",
            subject="order fields",
            reason="Partners parse them",
            cite=(("app/api/orders.py", None, "OrderSerializer"),),
            age=80,
        ),
        Mem(
            "max-page-size",
            "project",
            "Largest page",
            "A client may ask for at most 200 orders a page (`MAX_PAGE_SIZE`); larger limits are clamped.",
            subject="maximum page size",
            reason="Protects the database",
            cite=(("app/api/orders.py", None, "MAX_PAGE_SIZE"),),
            age=80,
        ),
        Mem(
            "webhook-secret",
            "project",
            "Stripe webhooks are verified",
            "`verify_webhook()` checks Stripe's signature with `STRIPE_WEBHOOK_SECRET` before anything is trusted.",
            subject="stripe webhooks",
            reason="Forged events",
            cite=("app/payments/stripe_client.py",),
            age=80,
        ),
        Mem(
            "user-timezone",
            "user",
            "The on-call lead works from Lisbon",
            "The on-call lead works from Lisbon (UTC+0/+1): page them only between 08:00 and 20:00 local time.",
            subject="on-call hours",
            reason="Escalations",
            age=80,
        ),
    )


DOMAIN = Domain("shopfront", BEFORE, AFTER, describe, NOTES)
