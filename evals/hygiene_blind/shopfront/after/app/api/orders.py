"""Orders API: cursor pagination and totals computed on the server."""

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


def routes() -> list[tuple[str, str, object]]:
    return [
        ("GET", "/v1/orders", list_orders),
        ("GET", "/v2/orders", list_orders),
        ("POST", "/v2/orders", create_order),
    ]
