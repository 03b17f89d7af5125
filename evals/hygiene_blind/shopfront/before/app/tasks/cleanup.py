"""Delete abandoned carts: `python -m app.tasks.cleanup --older-than-days N`."""

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
