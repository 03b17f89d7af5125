"""Login, access tokens and sessions."""

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
