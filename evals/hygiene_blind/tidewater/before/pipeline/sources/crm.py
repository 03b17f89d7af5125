"""The CRM source: contacts through its REST API."""

from __future__ import annotations

import os

import requests

CRM_BASE = "https://api.crm.example.com/v3"


def fetch_contacts(updated_since: str) -> list[dict]:
    headers = {"Authorization": f"Bearer {os.environ['CRM_API_KEY']}"}
    response = requests.get(f"{CRM_BASE}/contacts", params={"since": updated_since}, headers=headers, timeout=30)
    response.raise_for_status()
    return response.json()["contacts"]
