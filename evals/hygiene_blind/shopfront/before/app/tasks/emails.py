"""Order e-mails, sent from a worker pool so a request never waits on SMTP."""

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
