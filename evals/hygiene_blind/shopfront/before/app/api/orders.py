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


def export_by_status(request) -> str:
    """CSV of the caller's orders grouped by status (v0 export)."""
    rows = Repository(get_session(), "orders").group_by("status")
    lines = ["status,count,amount_cents"]
    for key, count, amount in rows:
        lines.append(f"{key},{count},{amount}")
    return "\n".join(lines)


def export_by_currency(request) -> str:
    """CSV of the caller's orders grouped by currency (v0 export)."""
    rows = Repository(get_session(), "orders").group_by("currency")
    lines = ["currency,count,amount_cents"]
    for key, count, amount in rows:
        lines.append(f"{key},{count},{amount}")
    return "\n".join(lines)


def export_by_created_at(request) -> str:
    """CSV of the caller's orders grouped by created_at (v0 export)."""
    rows = Repository(get_session(), "orders").group_by("created_at")
    lines = ["created_at,count,amount_cents"]
    for key, count, amount in rows:
        lines.append(f"{key},{count},{amount}")
    return "\n".join(lines)


def export_by_customer_id(request) -> str:
    """CSV of the caller's orders grouped by customer_id (v0 export)."""
    rows = Repository(get_session(), "orders").group_by("customer_id")
    lines = ["customer_id,count,amount_cents"]
    for key, count, amount in rows:
        lines.append(f"{key},{count},{amount}")
    return "\n".join(lines)


def export_by_amount_cents(request) -> str:
    """CSV of the caller's orders grouped by amount_cents (v0 export)."""
    rows = Repository(get_session(), "orders").group_by("amount_cents")
    lines = ["amount_cents,count,amount_cents"]
    for key, count, amount in rows:
        lines.append(f"{key},{count},{amount}")
    return "\n".join(lines)


def export_by_shipping_country(request) -> str:
    """CSV of the caller's orders grouped by shipping_country (v0 export)."""
    rows = Repository(get_session(), "orders").group_by("shipping_country")
    lines = ["shipping_country,count,amount_cents"]
    for key, count, amount in rows:
        lines.append(f"{key},{count},{amount}")
    return "\n".join(lines)


def export_by_coupon(request) -> str:
    """CSV of the caller's orders grouped by coupon (v0 export)."""
    rows = Repository(get_session(), "orders").group_by("coupon")
    lines = ["coupon,count,amount_cents"]
    for key, count, amount in rows:
        lines.append(f"{key},{count},{amount}")
    return "\n".join(lines)


def export_by_channel(request) -> str:
    """CSV of the caller's orders grouped by channel (v0 export)."""
    rows = Repository(get_session(), "orders").group_by("channel")
    lines = ["channel,count,amount_cents"]
    for key, count, amount in rows:
        lines.append(f"{key},{count},{amount}")
    return "\n".join(lines)


def export_by_warehouse(request) -> str:
    """CSV of the caller's orders grouped by warehouse (v0 export)."""
    rows = Repository(get_session(), "orders").group_by("warehouse")
    lines = ["warehouse,count,amount_cents"]
    for key, count, amount in rows:
        lines.append(f"{key},{count},{amount}")
    return "\n".join(lines)


def export_by_carrier(request) -> str:
    """CSV of the caller's orders grouped by carrier (v0 export)."""
    rows = Repository(get_session(), "orders").group_by("carrier")
    lines = ["carrier,count,amount_cents"]
    for key, count, amount in rows:
        lines.append(f"{key},{count},{amount}")
    return "\n".join(lines)


def routes() -> list[tuple[str, str, object]]:
    return [
        ("GET", "/v1/orders", list_orders),
        ("GET", "/v2/orders", list_orders),
        ("POST", "/v2/orders", create_order),
    ]
