"""Fill a local database with demo customers and orders."""

from app.db import Repository, get_session

DEMO_CUSTOMERS = 20


def seed() -> None:
    repo = Repository(get_session(), "customers")
    for n in range(DEMO_CUSTOMERS):
        repo.add({"email": f"demo{n}@example.test"})


if __name__ == "__main__":
    seed()
