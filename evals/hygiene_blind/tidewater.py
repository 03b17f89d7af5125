"""tidewater: a nightly data pipeline (Python, SQL, an Airflow DAG) loading a warehouse."""

from __future__ import annotations

from evals.hygiene_blind.model import Domain, Mem, Store

PYPROJECT = """\
[project]
name = "tidewater"
version = "0.14.0"
requires-python = ">=3.11"
dependencies = ["pandas>=2.2", "pyarrow>=15", "snowflake-connector-python>=3.7", "boto3>=1.34"]

[project.scripts]
tidewater = "pipeline.cli:main"

[tool.pytest.ini_options]
addopts = "-q"
"""

MAKEFILE = """\
.PHONY: test nightly backfill lint

test:
\tpytest -q tests

nightly:
\tpython -m pipeline.cli run --since yesterday

backfill:
\tpython -m pipeline.cli run --since $(START) --until $(END) --full-refresh

lint:
\truff check pipeline tests && sqlfluff lint sql
"""

GITIGNORE = "data/\ntarget/\ndist/\n.venv/\n__pycache__/\n"

READERS = '''"""Readers for the raw exports: CSV in chunks, Parquet whole."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd

CHUNK_ROWS = 50_000


def read_csv(path: str, *, chunk_rows: int = CHUNK_ROWS) -> Iterator[pd.DataFrame]:
    """Yield `path` in chunks of `chunk_rows`; the CRM export's byte order mark is stripped."""
    yield from pd.read_csv(path, chunksize=chunk_rows, encoding="utf-8-sig")


def read_parquet(path: str) -> pd.DataFrame:
    return pd.read_parquet(path)
'''

EXTRACT_TEMPLATE = '''"""Pull raw exports from the sources into the raw bucket."""

from __future__ import annotations

import datetime as dt

import boto3

from pipeline.{module} import read_csv

S3_BUCKET = "tidewater-raw"


class Extractor:
    def __init__(self, source: str) -> None:
        self.source = source  # also the prefix in the bucket
        self.s3 = boto3.client("s3")

    def run(self, since: dt.date) -> list[str]:
        listing = self.s3.list_objects_v2(Bucket=S3_BUCKET, Prefix=f"{{self.source}}/{{since:%Y-%m-%d}}")
        return [item["Key"] for item in listing.get("Contents", [])]
{extra}

def extract_orders(since: dt.date) -> int:
    rows = 0
    for key in Extractor("orders").run(since):
        for chunk in read_csv(f"s3://{{S3_BUCKET}}/{{key}}"):
            rows += len(chunk)
    return rows
'''

EXTRACT_INCREMENTAL = """
    def run_incremental(self, cursor: str) -> list[str]:
        listing = self.s3.list_objects_v2(Bucket=S3_BUCKET, Prefix=self.source, StartAfter=cursor)
        return [item["Key"] for item in listing.get("Contents", [])]
"""

TRANSFORMS_TEMPLATE = '''"""Row-level transforms applied between extract and load."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

FX_TABLE = "fx_rates_daily"


def dedupe_rows(rows: Iterable[dict], key: tuple[str, ...] = ("order_id",)) -> list[dict]:
    """Keep the last row seen for each key: corrections arrive after the original."""
    latest: dict[tuple, dict] = {{}}
    for row in rows:
        latest[tuple(row[k] for k in key)] = row
    return list(latest.values())


def normalize_ts(value: str) -> dt.datetime:
    """Parse an ISO timestamp and convert it to UTC (naive timestamps are taken as UTC)."""
    parsed = dt.datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


def {currency}(amount: str, currency: str, rates: dict[tuple[str, str], float], day: str) -> float:
    """Strip symbols and convert to EUR at the rate of the order's day (from FX_TABLE)."""
    value = float(amount.replace("€", "").replace("$", "").replace(",", ""))
    return value * rates[(currency, day)]
'''

LOAD = '''"""Load transformed rows into the warehouse."""

from __future__ import annotations

from collections.abc import Sequence

BATCH_SIZE = 5000


class WarehouseLoader:
    def __init__(self, connection) -> None:
        self.connection = connection

    def merge(self, table: str, rows: Sequence[dict], key: str) -> int:
        """Upsert `rows` by `key`, BATCH_SIZE rows at a time, one transaction per table."""
        with self.connection.begin():
            for start in range(0, len(rows), BATCH_SIZE):
                batch = rows[start : start + BATCH_SIZE]
                self.connection.execute(f"merge into {table} using batch on {key}", batch)
        return len(rows)

    def truncate_and_load(self, table: str, rows: Sequence[dict]) -> int:
        """For small dimension tables only."""
        with self.connection.begin():
            self.connection.execute(f"truncate table {table}")
            self.connection.execute(f"insert into {table} values", rows)
        return len(rows)


def load_to_warehouse(loader: WarehouseLoader, table: str, rows: Sequence[dict]) -> int:
    return loader.merge(table, rows, key="id")
'''

SCHEDULER_TEMPLATE = '''"""A small cron-style scheduler for the jobs outside Airflow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_TZ = "UTC"


@dataclass
class Job:
    name: str
    cron: str
    run: Callable[[], None]
    {retries}: int = 3


class Scheduler:
    def __init__(self, tz: str = DEFAULT_TZ) -> None:
        self.tz = tz
        self.jobs: list[Job] = []

    def schedule(self, name: str, cron: str, run: Callable[[], None], *, {retries}: int = 3) -> Job:
        """Cron expressions are read in the scheduler's time zone (UTC unless told)."""
        job = Job(name, cron, run, {retries})
        self.jobs.append(job)
        return job

    def run_pending(self, due: Callable[[Job], bool]) -> None:
        for job in self.jobs:
            if due(job):
                for attempt in range(job.{retries} + 1):
                    try:
                        job.run()
                        break
                    except Exception:
                        if attempt == job.{retries}:
                            raise
'''

CLI_TEMPLATE = '''"""`tidewater run`: one pipeline run over a date range."""

from __future__ import annotations

import argparse
import datetime as dt


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tidewater")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--since", required=True)
    run.add_argument("--until")
    run.add_argument("--tables", nargs="*")
    run.add_argument("--full-refresh", action="store_true", help="replace the partitions")
    run.add_argument("{plan}", action="store_true", help="list what would be loaded")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    since = dt.date.today() - dt.timedelta(days=1) if args.since == "yesterday" else dt.date.fromisoformat(args.since)
    from pipeline.extract import extract_orders

    if args.{plan_attr}:
        print(f"would load orders since {{since}}")
        return
    extract_orders(since)


if __name__ == "__main__":
    main()
'''

QUALITY = '''"""Checks that stop a run before bad data reaches the warehouse."""

from __future__ import annotations

from collections.abc import Iterable


class QualityError(Exception):
    pass


def check_nulls(rows: Iterable[dict], columns: tuple[str, ...]) -> None:
    for row in rows:
        for column in columns:
            if row.get(column) is None:
                raise QualityError(f"null {column}")


class RowCountCheck:
    tolerance = 0.02

    def __init__(self, yesterday: int) -> None:
        self.yesterday = yesterday

    def check(self, today: int) -> None:
        if self.yesterday and abs(today - self.yesterday) / self.yesterday > self.tolerance:
            raise QualityError(f"row count moved from {self.yesterday} to {today}")
'''

CRM = '''"""The CRM source: contacts through its REST API."""

from __future__ import annotations

import os

import requests

CRM_BASE = "https://api.crm.example.com/v3"


def fetch_contacts(updated_since: str) -> list[dict]:
    headers = {"Authorization": f"Bearer {os.environ['CRM_API_KEY']}"}
    response = requests.get(f"{CRM_BASE}/contacts", params={"since": updated_since}, headers=headers, timeout=30)
    response.raise_for_status()
    return response.json()["contacts"]
'''

ORDERS_DAILY = """\
-- orders_daily: one row per day and currency, rebuilt every night
create or replace table orders_daily as
select date_trunc('day', ordered_at) as day, currency, count(*) as orders, sum(amount_eur) as amount_eur
from stg_orders
group by 1, 2;
"""

CUSTOMERS_DIM = """\
-- customers_dim: slowly changing dimension (type 2), rebuilt weekly
create or replace table customers_dim as
select customer_id, email, country, valid_from, coalesce(valid_to, '9999-12-31') as valid_to
from stg_customers;
"""

DAG = '''"""The nightly DAG: extract, stage, load."""

from airflow import DAG
from airflow.operators.bash import BashOperator
import pendulum

with DAG(
    "tidewater_nightly",
    schedule="0 2 * * *",
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    catchup=False,
) as dag:
    extract = BashOperator(task_id="extract", bash_command="python -m pipeline.cli run --since yesterday")
    stage = BashOperator(task_id="stage", bash_command="dbt run --select stg_*")
    load = BashOperator(task_id="load", bash_command="dbt run --select orders_daily")
    extract >> stage >> load
'''

SETTINGS = """\
warehouse:
  kind: snowflake
  database: ANALYTICS
  size:
    staging: X-Small
    production: Large
timezone: UTC
raw_retention_days: 90
"""

BACKFILL = """\
#!/bin/sh
# Usage: scripts/backfill.sh START END
set -eu
python -m pipeline.cli run --since "$1" --until "$2" --full-refresh
"""

TEST_TRANSFORMS = """from pipeline.transforms import dedupe_rows, normalize_ts


def test_dedupe_keeps_last():
    rows = [{"order_id": 1, "v": "a"}, {"order_id": 1, "v": "b"}]
    assert dedupe_rows(rows) == [{"order_id": 1, "v": "b"}]


def test_naive_timestamps_are_utc():
    assert normalize_ts("2026-01-01T10:00:00").utcoffset().total_seconds() == 0
"""

TEST_LOAD = """from pipeline.load import BATCH_SIZE, WarehouseLoader


def test_merge_batches(fake_connection):
    WarehouseLoader(fake_connection).merge("orders", [{"id": n} for n in range(BATCH_SIZE + 1)], "id")
    assert len(fake_connection.executed) == 2
"""

BEFORE: dict[str, str] = {
    "pyproject.toml": PYPROJECT,
    "Makefile": MAKEFILE,
    ".gitignore": GITIGNORE,
    "pipeline/__init__.py": "",
    "pipeline/io.py": READERS,
    "pipeline/extract.py": EXTRACT_TEMPLATE.format(module="io", extra=EXTRACT_INCREMENTAL),
    "pipeline/transforms.py": TRANSFORMS_TEMPLATE.format(currency="clean_currency"),
    "pipeline/load.py": LOAD,
    "pipeline/scheduler.py": SCHEDULER_TEMPLATE.format(retries="max_retries"),
    "pipeline/cli.py": CLI_TEMPLATE.format(plan="--dry-run", plan_attr="dry_run"),
    "pipeline/quality.py": QUALITY,
    "pipeline/sources/__init__.py": "",
    "pipeline/sources/crm.py": CRM,
    "sql/models/orders_daily.sql": ORDERS_DAILY,
    "sql/models/customers_dim.sql": CUSTOMERS_DIM,
    "dags/nightly.py": DAG,
    "config/settings.yaml": SETTINGS,
    "scripts/backfill.sh": BACKFILL,
    "tests/test_transforms.py": TEST_TRANSFORMS,
    "tests/test_load.py": TEST_LOAD,
}

AFTER: dict[str, str | None] = {
    "pipeline/io.py": None,
    "pipeline/readers.py": READERS,
    "pipeline/extract.py": EXTRACT_TEMPLATE.format(module="readers", extra=""),
    "pipeline/transforms.py": TRANSFORMS_TEMPLATE.format(currency="normalize_currency"),
    "pipeline/scheduler.py": SCHEDULER_TEMPLATE.format(retries="retry_limit"),
    "pipeline/cli.py": CLI_TEMPLATE.format(plan="--plan", plan_attr="plan"),
    "scripts/backfill.sh": None,
}

NOTES: list[tuple[str, str, bool]] = [
    ("objective", "Move the CRM source onto the chunked readers", False),
    ("objective", "Backfill orders_daily for 2025 after the loader change lands", False),
    ("blockers", "Waiting on the data team's sign-off for the customers_dim schema", False),
    ("blockers", "Need read access to the production replica from ops", False),
    ("pending", "iteration 3 passed at 14:32", True),
    ("pending", "Decide whether late rows older than 30 days are archived", False),
    ("pending", "[x] switch extract to pipeline.readers", True),
    ("pending", "Migrate the nightly DAG to the new scheduler", False),
    ("pending", "Fix the flaky test in tests/test_load.py", False),
    ("pending", "3 of 5 phases complete", True),
    ("pending", "Review the FX rates refresh time with finance", False),
    ("pending", "Drop the legacy pipeline.io import path in 0.15", False),
    ("pending", "Finished the currency normaliser; tests green", True),
    ("pending", "Add a row-count check for customers_dim", False),
    ("pending", "Document --plan in the runbook", False),
]


def lines(code: dict[str, str], path: str) -> int:
    return code[path].count("\n")


def describe(s: Store, code: dict[str, str]) -> None:
    add, plant, clean = s.add, s.plant, s.clean

    # ---------------------------------------------------------------- near-duplicates
    a, b = add(
        Mem(
            "warehouse-merge",
            "project",
            "How rows reach the warehouse",
            "`WarehouseLoader.merge()` upserts rows by key in batches of 5000 (`BATCH_SIZE`).",
            subject="warehouse loading",
            reason="Idempotent reruns depend on it",
            cite=(("pipeline/load.py", None, "WarehouseLoader.merge"),),
            age=70,
        ),
        Mem(
            "loader-upserts",
            "project",
            "The loader upserts in batches",
            (
                "Rows reach the warehouse through `WarehouseLoader.merge()`, which upserts by key, 5000 rows per batch (`BATCH_SIZE`).",
                "Loading upserts rows by key through `WarehouseLoader.merge()`, in batches of 5000 rows (`BATCH_SIZE`).",
            ),
            subject="warehouse loading",
            reason="Reruns must not duplicate rows",
            cite=("pipeline/load.py",),
            age=9,
        ),
    )
    plant("near_duplicate", a, b, note="reworded")

    a, b = add(
        Mem(
            "timestamps-utc",
            "project",
            "Timestamps are UTC",
            "All timestamps are converted to UTC by `normalize_ts()` before loading.",
            subject="timestamps",
            reason="Sources use three time zones",
            cite=("pipeline/transforms.py",),
            age=80,
        ),
        Mem(
            "normalize-ts-utc",
            "project",
            "normalize_ts converts to UTC",
            (
                "`normalize_ts()` turns every timestamp into UTC before it is loaded.",
                "Before loading, `normalize_ts()` converts each timestamp to UTC.",
            ),
            subject="Timestamps",
            reason="Mixed time zones broke daily totals",
            cite=(("pipeline/transforms.py", None, "normalize_ts"),),
            age=6,
        ),
    )
    plant("near_duplicate", a, b, note="paraphrase with synonyms")

    a, b = add(
        Mem(
            "raw-bucket",
            "reference",
            "Where raw exports land",
            "Raw exports land in the S3 bucket tidewater-raw (`S3_BUCKET`), one prefix per source.",
            subject="raw bucket",
            reason="Replays read from it",
            cite=("pipeline/extract.py",),
            age=90,
        ),
        Mem(
            "raw-exports-location",
            "reference",
            "Raw export location",
            (
                "Raw source exports are written to the tidewater-raw bucket (`S3_BUCKET`) under one prefix per source.",
                "Each source's raw exports go to its own prefix in the tidewater-raw S3 bucket (`S3_BUCKET`).",
            ),
            subject="raw bucket",
            reason="Replays need the raw files",
            cite=("pipeline/extract.py",),
            age=12,
        ),
    )
    plant("near_duplicate", a, b, note="reworded")

    a, b = add(
        Mem(
            "nightly-schedule",
            "project",
            "When the nightly run starts",
            "The nightly DAG runs at 02:00 UTC and processes the previous day.",
            subject="nightly run",
            reason="Reports are due at 07:00",
            cite=("dags/nightly.py",),
            age=60,
        ),
        Mem(
            "nightly-dag-time",
            "project",
            "Nightly DAG start time",
            (
                "The nightly DAG starts at 02:00 UTC and loads the previous day's data.",
                "At 02:00 UTC the nightly DAG starts and loads the data of the day before.",
            ),
            subject="nightly run",
            reason="Reports are due in the morning",
            cite=("dags/nightly.py",),
            age=4,
        ),
    )
    plant("near_duplicate", a, b, note="processes vs loads")

    a, b = add(
        Mem(
            "dedupe-keeps-last",
            "project",
            "Which duplicate survives",
            "`dedupe_rows()` keeps the last row per order_id.",
            subject="deduplication",
            reason="Corrections arrive after the original",
            cite=(("pipeline/transforms.py", None, "dedupe_rows"),),
            age=75,
        ),
        Mem(
            "duplicate-orders",
            "project",
            "Duplicate order rows",
            (
                "Duplicates are removed by `dedupe_rows()`, which keeps the most recent row for each order_id.",
                "For each order_id, `dedupe_rows()` keeps only the latest row and drops the others.",
            ),
            subject="deduplication",
            reason="Late corrections must win",
            cite=("pipeline/transforms.py",),
            age=15,
        ),
    )
    plant("near_duplicate", a, b, note="last vs most recent")

    a, b, c = add(
        Mem(
            "csv-chunks",
            "reference",
            "CSV is read in chunks",
            "`read_csv()` reads files in chunks.",
            subject="csv reading",
            reason="Exports are large",
            cite=("pipeline/readers.py",),
            age=40,
        ),
        Mem(
            "chunked-csv",
            "reference",
            "Chunked CSV reading",
            (
                "CSV files are read in chunks by `read_csv()`.",
                "CSV exports are read chunk by chunk with `read_csv()`.",
            ),
            subject="CSV reading",
            reason="Large exports",
            cite=("pipeline/readers.py",),
            age=30,
        ),
        Mem(
            "csv-chunk-size",
            "reference",
            "CSV chunk size",
            "`read_csv()` reads CSV files in chunks of 50,000 rows (`CHUNK_ROWS`), so a 2 GB export fits in memory.",
            subject="csv reading",
            reason="A 2 GB export once ran out of memory",
            cite=(
                ("pipeline/readers.py", 9, "CHUNK_ROWS"),
                ("pipeline/readers.py", None, "read_csv"),
            ),
            age=2,
        ),
    )
    plant("near_duplicate", a, c, note="triple; keeper is the most specific and newest")
    plant("near_duplicate", b, c, note="triple; keeper is the most specific and newest")

    # look-alikes
    a, b = add(
        Mem(
            "orders-daily-rebuild",
            "project",
            "orders_daily is rebuilt nightly",
            "`sql/models/orders_daily.sql` is rebuilt every night from the staged orders.",
            subject="orders_daily model",
            reason="Finance reads it daily",
            cite=("sql/models/orders_daily.sql",),
            age=50,
        ),
        Mem(
            "customers-dim-rebuild",
            "project",
            "customers_dim is rebuilt weekly",
            "`sql/models/customers_dim.sql` is rebuilt every week from the staged customers.",
            subject="customers_dim model",
            reason="Customer data changes slowly",
            cite=("sql/models/customers_dim.sql",),
            age=50,
        ),
    )
    clean("near_duplicate", a, b, note="same template, other model and period")

    a, b = add(
        Mem(
            "scheduler-retries",
            "project",
            "Scheduler retries",
            "Jobs scheduled with `Scheduler.schedule()` are retried 3 times by default (`retry_limit`).",
            subject="scheduler retries",
            reason="Flaky sources",
            cite=(("pipeline/scheduler.py", None, "Scheduler.schedule"),),
            age=20,
        ),
        Mem(
            "scheduler-timezone",
            "project",
            "Scheduler time zone",
            "`Scheduler.schedule()` reads cron expressions in UTC (`DEFAULT_TZ`) unless the scheduler is given a zone.",
            subject="scheduler timezone",
            reason="Daylight saving shifted jobs",
            cite=(("pipeline/scheduler.py", None, "DEFAULT_TZ"),),
            age=20,
        ),
    )
    clean("near_duplicate", a, b, note="same function, different facts")

    a = Mem(
        "crm-skipped-sundays",
        "project",
        "The CRM source is skipped on Sundays",
        "The nightly run skips the CRM source on Sundays because the CRM export is paused.",
        subject="crm sunday skip",
        reason="Empty loads raised alerts",
        cite=("pipeline/sources/crm.py",),
        age=35,
    )
    b = Mem(
        "ads-skipped-sundays",
        "project",
        "The ads source is skipped on Sundays",
        "The nightly run skips the ads source on Sundays because the ads export is paused.",
        subject="ads sunday skip",
        reason="Empty loads raised alerts",
        cite=("dags/nightly.py",),
        age=8,
        fm={
            "distinct_from": [
                {"name": "crm-skipped-sundays", "reason": "two sources, each paused on Sundays"}
            ]
        },
    )
    add(a, b)
    clean(
        "near_duplicate", a, b, note="near-identical wording, other source, distinct_from recorded"
    )

    old = Mem(
        "loads-truncate",
        "project",
        "How tables are loaded",
        "Every table is loaded with `truncate_and_load()`.",
        subject="load strategy",
        reason="Simple",
        cite=("pipeline/load.py",),
        batch=1,
        age=160,
        fm={"status": "superseded", "superseded_by": "load-strategy"},
    )
    new = Mem(
        "load-strategy",
        "project",
        "How tables are loaded",
        "Fact tables are loaded with `WarehouseLoader.merge()`; `truncate_and_load()` is only for small dimensions.",
        subject="load strategy",
        reason="Truncating facts lost a day of data once",
        cite=(("pipeline/load.py", None, "WarehouseLoader.truncate_and_load"),),
        age=25,
        fm={"supersedes": ["loads-truncate"]},
    )
    add(old, new)
    clean("near_duplicate", old, new, note="superseded")
    clean("contradiction", old, new, note="superseded")

    a, b = add(
        Mem(
            "null-check",
            "project",
            "Null keys stop a run",
            "`check_nulls()` fails the run when a key column holds a null.",
            subject="data quality checks",
            reason="Nulls broke joins downstream",
            cite=(("pipeline/quality.py", None, "check_nulls"),),
            age=45,
        ),
        Mem(
            "row-count-check",
            "project",
            "Row counts stop a run",
            "`RowCountCheck` fails the run when today's row count differs from yesterday's by more than 2 % (`tolerance`).",
            subject="data quality checks",
            reason="A half-empty export went unnoticed",
            cite=(("pipeline/quality.py", None, "RowCountCheck"),),
            age=14,
        ),
    )
    clean("near_duplicate", a, b, note="same subject, two checks")
    clean("contradiction", a, b, note="same subject, two checks")

    a, b = add(
        Mem(
            "transaction-per-table",
            "project",
            "One transaction per table",
            "The loader runs one transaction per table.",
            subject="loader transactions",
            reason="A failed table rolls back alone",
            cite=("pipeline/load.py",),
            age=55,
        ),
        Mem(
            "no-cross-table-transaction",
            "project",
            "No transaction across tables",
            "The loader does not hold a transaction across tables, so one failed table does not undo the others.",
            subject="loader transactions",
            reason="Partial loads are preferred",
            cite=("pipeline/load.py",),
            age=18,
        ),
    )
    clean("near_duplicate", a, b, note="compatible statements, one negative")
    clean("contradiction", a, b, note="per table yes, across tables no: compatible")

    # ---------------------------------------------------------------- contradictions
    a, b = add(
        Mem(
            "warehouse-engine",
            "project",
            "The warehouse engine",
            "The warehouse is Snowflake (database ANALYTICS).",
            subject="warehouse",
            reason="SQL dialect depends on it",
            cite=("config/settings.yaml",),
            age=100,
        ),
        Mem(
            "warehouse-bigquery",
            "project",
            "Warehouse",
            ("The warehouse is BigQuery.", "Data is loaded into BigQuery."),
            subject="Warehouse",
            reason="SQL dialect",
            cite=("config/settings.yaml",),
            age=10,
        ),
    )
    plant("contradiction", a, b, note="Snowflake vs BigQuery")

    a, b = add(
        Mem(
            "batch-size",
            "project",
            "Load batch size",
            "`WarehouseLoader` writes 5000 rows per batch.",
            subject="load batch size",
            reason="Larger batches time out",
            cite=(("pipeline/load.py", None, "BATCH_SIZE"),),
            age=65,
        ),
        Mem(
            "batch-size-20k",
            "project",
            "Rows per load batch",
            ("The loader writes 20,000 rows per batch.", "Each load batch holds 20,000 rows."),
            subject="load batch size",
            reason="Fewer round trips",
            cite=("pipeline/load.py",),
            age=7,
        ),
    )
    plant("contradiction", a, b, note="5000 vs 20,000")

    a, b = add(
        Mem(
            "partitions-utc",
            "project",
            "Daily partitions use UTC days",
            "The pipeline computes daily partitions in UTC.",
            subject="partition timezone",
            reason="One definition of a day",
            cite=("config/settings.yaml",),
            age=85,
        ),
        Mem(
            "partitions-berlin",
            "project",
            "Daily partitions follow Berlin time",
            (
                "Daily partitions are computed in Europe/Berlin time.",
                "A day's partition runs from midnight to midnight in Europe/Berlin.",
            ),
            subject="partition timezone",
            reason="Finance reports in local time",
            cite=("config/settings.yaml",),
            age=11,
        ),
    )
    plant("contradiction", a, b, note="UTC vs Europe/Berlin")

    a, b = add(
        Mem(
            "sql-lowercase",
            "feedback",
            "SQL keyword case",
            "Write SQL keywords in lower case.",
            subject="sql style",
            reason="Matches the existing models",
            age=95,
        ),
        Mem(
            "sql-uppercase",
            "feedback",
            "Upper-case SQL keywords",
            (
                "SQL keywords must be upper case (SELECT, FROM, WHERE).",
                "Use upper case for SQL keywords such as SELECT and FROM.",
            ),
            subject="SQL style",
            reason="Easier to read",
            age=13,
        ),
    )
    plant("contradiction", a, b, note="lower vs upper case")

    a, b = add(
        Mem(
            "late-rows-dropped",
            "project",
            "Late rows are dropped",
            "Rows arriving more than 3 days late are dropped.",
            subject="late data",
            reason="Closed periods stay closed",
            cite=("pipeline/load.py",),
            age=58,
        ),
        Mem(
            "late-rows-merged",
            "project",
            "Late rows are merged",
            (
                "Late rows are never dropped; they are merged into their original partition.",
                "No late row is dropped: each one is merged into the partition it belongs to.",
            ),
            subject="late data",
            reason="Totals must be complete",
            cite=(("pipeline/load.py", None, "WarehouseLoader.merge"),),
            age=17,
        ),
    )
    plant("contradiction", a, b, note="dropped vs never dropped")

    a, b = add(
        Mem(
            "customers-dim-scd2",
            "project",
            "customers_dim keeps history",
            "`sql/models/customers_dim.sql` keeps the full history of each customer (SCD type 2).",
            subject="customers_dim history",
            reason="Churn analysis needs history",
            cite=("sql/models/customers_dim.sql",),
            age=47,
        ),
        Mem(
            "customers-dim-scd1",
            "project",
            "customers_dim keeps the latest row",
            (
                "`customers_dim` keeps only the latest row per customer (SCD type 1).",
                "Only the current row of each customer is kept in `customers_dim` (type 1).",
            ),
            subject="customers_dim history",
            reason="Smaller table",
            cite=("sql/models/customers_dim.sql",),
            age=12,
        ),
    )
    plant("contradiction", a, b, note="type 2 vs type 1")

    # look-alikes
    old = Mem(
        "crm-hourly",
        "project",
        "CRM pull frequency",
        "The CRM source is pulled every hour.",
        subject="crm pull frequency",
        reason="Sales wanted fresh data",
        cite=("pipeline/sources/crm.py",),
        batch=1,
        age=140,
        fm={"status": "superseded", "superseded_by": "crm-six-hourly"},
    )
    new = Mem(
        "crm-six-hourly",
        "project",
        "CRM pull frequency",
        "The CRM source is pulled every 6 hours.",
        subject="crm pull frequency",
        reason="The CRM API rate limit",
        cite=("pipeline/sources/crm.py",),
        age=22,
        fm={"supersedes": ["crm-hourly"]},
    )
    add(old, new)
    clean("contradiction", old, new, note="superseded")

    a, b = add(
        Mem(
            "raw-retention",
            "project",
            "Raw export retention",
            "Raw exports are kept for 90 days in the raw bucket.",
            subject="data retention",
            reason="Storage cost",
            cite=("config/settings.yaml",),
            age=38,
        ),
        Mem(
            "fact-retention",
            "project",
            "Fact table retention",
            "Warehouse fact tables keep 7 years of history.",
            subject="data retention",
            reason="Tax law",
            cite=("sql/models/orders_daily.sql",),
            age=38,
        ),
    )
    clean("contradiction", a, b, note="same subject, two stores")
    clean("near_duplicate", a, b, note="same subject, two stores")

    a, b = add(
        Mem(
            "staging-warehouse-size",
            "project",
            "Staging warehouse size",
            "The staging warehouse runs on an X-Small cluster.",
            subject="staging warehouse size",
            reason="Cost",
            cite=("config/settings.yaml",),
            age=26,
        ),
        Mem(
            "production-warehouse-size",
            "project",
            "Production warehouse size",
            "The production warehouse runs on a Large cluster.",
            subject="production warehouse size",
            reason="Nightly window",
            cite=("config/settings.yaml",),
            age=26,
        ),
    )
    clean("contradiction", a, b, note="different subjects")
    clean("near_duplicate", a, b, note="different subjects and values")

    a, b = add(
        Mem(
            "fx-conversion",
            "project",
            "Currency conversion table",
            "`normalize_currency()` converts amounts to EUR with the daily rates in `FX_TABLE`.",
            subject="currency conversion",
            reason="Reports are in EUR",
            cite=(("pipeline/transforms.py", None, "normalize_currency"),),
            age=21,
        ),
        Mem(
            "fx-rate-day",
            "project",
            "Which day's rate converts an order",
            "Currency conversion uses the rate of the order's day, not today's rate.",
            subject="Currency conversion",
            reason="Restated totals confused finance",
            cite=("pipeline/transforms.py",),
            age=9,
        ),
    )
    clean("contradiction", a, b, note="same subject, compatible")
    clean("near_duplicate", a, b, note="same subject, different facts")

    # ---------------------------------------------------------------- stale claims
    m = Mem(
        "use-io-read-csv",
        "feedback",
        "Read CSV through the pipeline's reader",
        (
            "Use `pipeline.io.read_csv` for every CSV source; it strips the byte order mark of the CRM export.",
        ),
        subject="csv sources",
        reason="pandas alone keeps the BOM in the first column name",
        batch=1,
        age=120,
    )
    add(m)
    plant("stale_citation", m, note="module pipeline/io.py deleted")

    m = Mem(
        "clean-currency",
        "project",
        "Currency cleaning",
        (
            "`clean_currency()` strips currency symbols and converts amounts to EUR.",
            "Amounts are cleaned and converted to EUR by `clean_currency()`.",
        ),
        subject="currency cleaning",
        reason="Sources format money differently",
        cite=("pipeline/transforms.py",),
        batch=1,
        age=110,
    )
    add(m)
    plant("stale_citation", m, note="function renamed")

    m = Mem(
        "job-retries-param",
        "reference",
        "Scheduler retry parameter",
        "Scheduler jobs take `max_retries` (default 3).",
        subject="scheduler retry parameter",
        reason="Tuning flaky jobs",
        cite=("pipeline/scheduler.py",),
        batch=1,
        age=105,
    )
    add(m)
    plant("stale_citation", m, note="identifier renamed to retry_limit")

    m = Mem(
        "dry-run-flag",
        "reference",
        "Listing what a run would load",
        (
            "Pass `--dry-run` to the pipeline CLI to list the tables a run would load without loading them.",
        ),
        subject="pipeline dry run",
        reason="Safe checks on production",
        cite=("pipeline/cli.py",),
        batch=1,
        age=100,
    )
    add(m)
    plant("stale_citation", m, note="flag renamed to --plan")

    m = Mem(
        "backfill-script",
        "reference",
        "How to backfill",
        "Backfills run through `scripts/backfill.sh`, which takes a start and an end date.",
        subject="backfills",
        reason="Finance asks for restatements",
        cite=("Makefile",),
        batch=1,
        age=115,
    )
    add(m)
    plant("stale_citation", m, note="script deleted (make backfill replaced it)")

    m = Mem(
        "incremental-extract",
        "project",
        "Incremental extraction",
        "Incremental extraction lists only the keys after a cursor.",
        subject="incremental extract",
        reason="Listing a whole prefix is slow",
        cite=(("pipeline/extract.py", None, "Extractor.run_incremental"),),
        batch=1,
        age=98,
    )
    add(m)
    plant("stale_citation", m, note="cited method removed")

    m = Mem(
        "timestamp-parsing",
        "project",
        "Where timestamps are parsed",
        "Timestamps are parsed with `datetime.fromisoformat`, never with dateutil.",
        subject="timestamp parsing",
        reason="dateutil guessed formats wrongly",
        cite=("pipeline/transform.py",),
        age=33,
    )
    add(m)
    plant("stale_citation", m, note="cited path never existed (typo)")

    # look-alikes
    m = Mem(
        "read-csv-bom",
        "project",
        "The CSV reader strips the BOM",
        "`read_csv()` strips the byte order mark that the CRM export adds.",
        subject="csv bom",
        reason="The first column name broke joins",
        cite=(("pipeline/readers.py", None, "read_csv"),),
        age=24,
    )
    add(m)
    clean("stale_citation", m, note="function moved to another module, still defined")

    m = Mem(
        "local-extracts",
        "reference",
        "Where local runs write",
        "Local runs write their extracts to `data/`, which is never committed.",
        subject="local extracts",
        reason="Keep the repository small",
        cite=(".gitignore",),
        age=44,
    )
    add(m)
    clean("stale_citation", m, note="git-ignored folder")

    m = Mem(
        "row-count-tolerance",
        "reference",
        "Row-count tolerance",
        "`RowCountCheck.tolerance` is 0.02: a 2 % swing in row counts stops the run.",
        subject="row count tolerance",
        reason="Tuned after false alarms",
        cite=("pipeline/quality.py",),
        age=29,
    )
    add(m)
    clean("stale_citation", m, note="class attribute")

    m = Mem(
        "extractor-source-prefix",
        "reference",
        "Extractor.source is the bucket prefix",
        "`Extractor.source` is also the object prefix in the raw bucket.",
        subject="extractor prefix",
        reason="Replays list by prefix",
        cite=(("pipeline/extract.py", None, "Extractor.source"),),
        age=31,
    )
    add(m)
    clean("stale_citation", m, note="attribute set on self")

    m = Mem(
        "no-direct-pandas-csv",
        "feedback",
        "Do not call pandas' CSV reader directly",
        "Never call `pd.read_csv` directly in a source; go through `read_csv()`.",
        subject="csv reader use",
        reason="Only the wrapper handles the BOM and chunking",
        age=27,
    )
    add(m)
    clean("stale_citation", m, note="another library's function")

    m = Mem(
        "full-refresh",
        "reference",
        "Replacing partitions",
        "`--full-refresh` replaces each partition of the range instead of merging into it.",
        subject="full refresh",
        reason="Restatements",
        cite=("pipeline/cli.py",),
        batch=1,
        age=96,
        record_verified=True,
    )
    add(m)
    clean("stale_citation", m, note="flag kept; the cited file changed")

    m = Mem(
        "orders-daily-sql",
        "reference",
        "Where the daily orders model is",
        "Daily order totals per currency come from `orders_daily.sql`, built from stg_orders.",
        subject="daily orders model",
        reason="Finance asks about it",
        cite=("sql/models/orders_daily.sql",),
        age=23,
    )
    add(m)
    clean("stale_citation", m, note="bare file name")

    # ---------------------------------------------------------------- save exclusions
    m = Mem(
        "upsert-pr",
        "project",
        "When the loader started upserting",
        (
            "Merged PR #57: the loader now upserts.",
            "Pull request #57 was merged and switched the loader to upserts.",
        ),
        subject="loader upsert change",
        reason="History",
        cite=("pipeline/load.py",),
        age=57,
    )
    add(m)
    plant("excluded_content", m, note="git history: a pull request")

    m = Mem(
        "export-revert",
        "project",
        "A reverted change",
        (
            "Reverted a3c9e17 because it broke the nightly export.",
            "Commit a3c9e17 was reverted; it broke the nightly export.",
        ),
        subject="export revert",
        reason="History",
        cite=("dags/nightly.py",),
        age=43,
    )
    add(m)
    plant("excluded_content", m, note="git history: a revert of a commit")

    m = Mem(
        "crm-phase-done",
        "project",
        "CRM work status",
        (
            "Phase 3 is done; the CRM source is wired in.",
            "The CRM source is wired in and phase 3 is complete.",
        ),
        subject="crm work",
        reason="Progress",
        cite=("pipeline/sources/crm.py",),
        age=1,
    )
    add(m)
    plant("excluded_content", m, note="ephemeral task state")

    m = Mem(
        "backfill-progress",
        "project",
        "Backfill progress",
        (
            "The orders_daily backfill is 60% complete as of 2026-10-03 11:20.",
            "60% of the orders_daily backfill was done at 11:20 on 2026-10-03.",
        ),
        subject="orders backfill",
        reason="Progress",
        cite=("sql/models/orders_daily.sql",),
        age=1,
    )
    add(m)
    plant("excluded_content", m, note="ephemeral task state")

    m = Mem(
        "loader-location",
        "reference",
        "Where WarehouseLoader is",
        (
            "`WarehouseLoader` is defined in `pipeline/load.py`.",
            "The `WarehouseLoader` class lives in `pipeline/load.py`.",
        ),
        subject="loader location",
        reason="Navigation",
        cite=("pipeline/load.py",),
        age=66,
    )
    add(m)
    plant("excluded_content", m, note="derivable from the code")

    m = Mem(
        "transforms-contents",
        "reference",
        "What transforms.py holds",
        "`pipeline/transforms.py` contains `dedupe_rows()`, `normalize_ts()` and `normalize_currency()`.",
        subject="transforms module contents",
        reason="Navigation",
        cite=("pipeline/transforms.py",),
        age=19,
    )
    add(m)
    plant("excluded_content", m, note="derivable: a listing of a module")

    m = Mem(
        "loader-rewrite-wip",
        "project",
        "Loader rewrite branch",
        (
            "The last commit on branch loader-rewrite was 'wip: batching'.",
            "On the loader-rewrite branch the latest commit message is 'wip: batching'.",
        ),
        subject="loader rewrite",
        reason="History",
        cite=("pipeline/load.py",),
        age=5,
    )
    add(m)
    plant("excluded_content", m, note="git history: a branch and a commit message")

    # look-alikes
    m = Mem(
        "idempotent-runs",
        "project",
        "Runs are idempotent",
        "Re-running a day with `--full-refresh` replaces that day's partition, so runs are idempotent.",
        subject="idempotent runs",
        reason="Operators rerun failed days blindly",
        cite=("pipeline/cli.py",),
        age=54,
    )
    add(m)
    clean("excluded_content", m)

    m = Mem(
        "dag-phase-names",
        "project",
        "DAG steps and table prefixes",
        "The DAG's three phases (extract, stage, load) are also the table prefixes in the warehouse.",
        subject="dag phases",
        reason="Lineage tools group by prefix",
        cite=("dags/nightly.py",),
        age=54,
    )
    add(m)
    clean("excluded_content", m, note="'phases' of the product, not of a task")

    m = Mem(
        "fx-refresh-time",
        "project",
        "When FX rates are ready",
        "The FX rates table is refreshed daily at 06:00 UTC by the finance team's job; loads before that use yesterday's rates.",
        subject="fx refresh",
        reason="Early reruns showed stale conversions",
        cite=("pipeline/transforms.py",),
        age=54,
    )
    add(m)
    clean("excluded_content", m, note="a clock time in a durable fact")

    m = Mem(
        "dedupe-keep-last-rule",
        "feedback",
        "Keep the last duplicate",
        "`dedupe_rows()` in `pipeline/transforms.py` must keep the last row, not the first: corrections arrive after the original.",
        subject="dedupe order",
        reason="Keeping the first lost every correction",
        age=54,
    )
    add(m)
    clean("excluded_content", m, note="location plus a rule and a reason")

    m = Mem(
        "hotfix-branches",
        "feedback",
        "Naming hotfix branches",
        "Name hotfix branches hotfix/<ticket>: CI deploys them to staging first.",
        subject="hotfix branches",
        reason="Unnamed hotfixes skipped staging",
        age=54,
    )
    add(m)
    clean("excluded_content", m, note="a branch-naming rule")

    m = Mem(
        "archived-partitions",
        "project",
        "Old partitions are archived",
        "Partitions older than 2024-01-01 are archived to Glacier and cannot be re-run.",
        subject="archived partitions",
        reason="Restores take 12 hours",
        cite=("config/settings.yaml",),
        age=54,
    )
    add(m)
    clean("excluded_content", m, note="a date that is not task state")

    # ---------------------------------------------------------------- secrets
    m = Mem(
        "snowflake-loader-url",
        "reference",
        "Loader connection",
        "The loader connects with snowflake://loader:Wint3r-Fjord-88@acme-eu.snowflakecomputing.com/ANALYTICS.",
        subject="loader connection",
        reason="Debugging loads",
        cite=("pipeline/load.py",),
        age=39,
    )
    add(m)
    plant("secret", m, note="password in a connection URL")

    m = Mem(
        "crm-api-key",
        "reference",
        "CRM API key for local runs",
        "For local runs export CRM_API_KEY=3f9c2a7e5b1d4f8a9c0e6b2d7a4f1c3e before `make nightly`.",
        subject="crm key",
        reason="Local testing",
        cite=("pipeline/sources/crm.py",),
        age=36,
    )
    add(m)
    plant("secret", m, note="NAME_KEY=value with a real-looking key")

    m = Mem(
        "dbt-repo-token",
        "reference",
        "Token used to clone the dbt repository",
        "The DAG clones the dbt project with the token ghp_R7kXw2Lq9ZtB4nVc8HmJ3sYd6PfA1eUo5GiT.",
        subject="dbt clone token",
        reason="Private repository",
        cite=("dags/nightly.py",),
        age=42,
    )
    add(m)
    plant("secret", m, note="GitHub personal access token")

    m = Mem(
        "geocoding-key",
        "reference",
        "Geocoding API key",
        "Addresses are geocoded with the Google key AIzaSyD4x9Qm2Lr7Tv1Kp8Wn3Hs6Jb0Yc5Ue2Fa.",
        subject="geocoding",
        reason="Country inference",
        cite=("pipeline/transforms.py",),
        age=48,
    )
    add(m)
    plant("secret", m, note="Google API key")

    m = Mem(
        "sftp-deploy-key",
        "reference",
        "Key for the partner SFTP drop",
        "The partner SFTP drop is read with this key:",
        subject="partner sftp",
        reason="Partner exports arrive there",
        cite=("pipeline/extract.py",),
        age=52,
        more="""```
-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACDhW2pXkqv7zR3m0V1cE8tYqJ4nB6sD9fL2gH5kM7wQpAAAAJgF3k2hBd5N
-----END OPENSSH PRIVATE KEY-----
```""",
    )
    add(m)
    plant("secret", m, note="OpenSSH private key")

    m = Mem(
        "sftp-password",
        "reference",
        "Partner SFTP password",
        (
            "The SFTP password for the partner drop is larch-Basalt-7731.",
            "Partner drop login: user tidewater, password larch-Basalt-7731.",
        ),
        subject="partner sftp password",
        reason="Fallback when the key fails",
        cite=("pipeline/extract.py",),
        age=52,
    )
    add(m)
    plant("secret", m, note="password in words")

    m = Mem(
        "enrichment-anthropic-key",
        "reference",
        "Key for the enrichment step",
        "The product-category enrichment calls the model API with sk-ant-api03-Zq8xV2mK7pL4nR9tW1yB6cD3fG5hJ0sA8eU2iO7kM4qT9vX1zC6bN3-wE5rY8uI0pQ2aS4dF7gH9jKlM3nB5vC7xZ1q2w3e4AA.",
        subject="enrichment model key",
        reason="Enrichment",
        cite=("pipeline/transforms.py",),
        age=16,
    )
    add(m)
    plant("secret", m, note="Anthropic API key")

    # look-alikes
    m = Mem(
        "dbt-package-pin",
        "reference",
        "dbt package pin",
        "The dbt utils package is pinned to revision 9c1e5f7a2b3d4c6e8f0a1b2c3d4e5f6a7b8c9d0e; bump it only with the models' tests green.",
        subject="dbt package pin",
        reason="Unpinned upgrades broke macros",
        cite=("dags/nightly.py",),
        age=41,
    )
    add(m)
    clean("secret", m, note="a pinned revision hash")
    clean("excluded_content", m, note="a pin is configuration, not history")

    m = Mem(
        "countries-checksum",
        "reference",
        "Reference file checksum",
        "The reference countries file must have md5 5d41402abc4b2a76b9719d911017c592; the loader refuses any other.",
        subject="countries file checksum",
        reason="A truncated file once loaded",
        cite=("pipeline/extract.py",),
        age=41,
    )
    add(m)
    clean("secret", m, note="a checksum")

    m = Mem(
        "snowflake-org-id",
        "reference",
        "Snowflake organisation id",
        "The Snowflake organisation id is 7f3e2b1c-9a4d-4e6f-8b2a-1c3d5e7f9a0b (support asks for it).",
        subject="snowflake organisation",
        reason="Support tickets",
        cite=("config/settings.yaml",),
        age=41,
    )
    add(m)
    clean("secret", m, note="an identifier, not a credential")

    m = Mem(
        "snowflake-password-source",
        "feedback",
        "Where the loader password comes from",
        "The loader's password comes from the SNOWFLAKE_PASSWORD variable; never put it in `config/settings.yaml`.",
        subject="loader password source",
        reason="Settings are committed",
        age=41,
    )
    add(m)
    clean("secret", m, note="names where a password lives")

    m = Mem(
        "crm-key-from-vault",
        "reference",
        "CRM key in the DAG",
        "In the DAG environment CRM_API_KEY=${CRM_API_KEY} is filled from the secrets manager at start-up.",
        subject="crm key source",
        reason="Rotation",
        cite=("pipeline/sources/crm.py",),
        age=41,
    )
    add(m)
    clean("secret", m, note="a variable reference")

    m = Mem(
        "connection-url-shape",
        "reference",
        "Shape of the loader URL",
        "Loader connection URLs look like snowflake://USER:PASSWORD@ACCOUNT/ANALYTICS.",
        subject="connection url format",
        reason="Onboarding",
        cite=("pipeline/load.py",),
        age=41,
    )
    add(m)
    clean("secret", m, note="placeholders in a URL")

    m = Mem(
        "crm-token-ttl",
        "reference",
        "CRM token lifetime",
        "CRM access tokens expire after 3600 seconds and keys rotate every 90 days.",
        subject="crm token lifetime",
        reason="Long runs must refresh",
        cite=("pipeline/sources/crm.py",),
        age=41,
    )
    add(m)
    clean("secret", m, note="talks about tokens, holds none")

    # ---------------------------------------------------------------- files that do not load
    bad = {
        "partition-pruning": (
            "---\n- name: partition-pruning\n- type: project\n---\n"
            "Queries on orders_daily must filter on day to prune partitions.\n",
            "frontmatter is a list",
        ),
        "staging-schema": (
            "---\nname: staging-schema\ndescription: Staging schema name\ntype: Project\n"
            "subject: staging schema\nreason: Models read from it\ncitations:\n- path: dags/nightly.py\n---\n"
            "Staged tables live in the STAGING schema.\n",
            "type spelled with a capital",
        ),
        "sqlfluff-rules": (
            "---\nname: sqlfluff-rules\ndescription: ''\ntype: reference\nsubject: sql lint\n"
            "reason: CI runs it\ncitations:\n- path: Makefile\n---\nSQL is linted with sqlfluff in CI.\n",
            "empty description",
        ),
        "orders-grain": (
            "---\nname: orders-grain\ndescription: Grain of orders_daily\ntype: project\nsubject: orders grain\n"
            "reason: Joins\ncitations:\n- path: sql/models/orders_daily.sql\n  line: 0\n---\n"
            "orders_daily has one row per day and currency.\n",
            "citation line 0",
        ),
        "legacy-exporter": (
            "---\nname: legacy-exporter\ndescription: The old exporter\ntype: project\nsubject: exporter\n"
            "reason: History\nstatus: archived\ncitations:\n- path: pipeline/extract.py\n---\n"
            "The old exporter wrote TSV files.\n",
            "unknown status",
        ),
        "loader-v2": (
            "---\nname: loader-v2\ndescription: The second loader\ntype: project\nsubject: loader version\n"
            "reason: Upserts\nsupersedes: loader-v1\ncitations:\n- path: pipeline/load.py\n---\n"
            "The loader upserts instead of appending.\n",
            "supersedes is not a list",
        ),
        "oncall-runbook": (
            "# On-call runbook\n\nWhen the nightly run fails, rerun the failed day with `make backfill`.\n",
            "no frontmatter at all",
        ),
    }
    for name, (raw, note) in bad.items():
        m = Mem(name, "project", "", "", raw=raw)
        add(m)
        plant("invalid_file", m, note=note)

    # look-alikes that load
    m = Mem(
        "warehouse_sizes",
        "reference",
        "Warehouse sizes per environment",
        "Warehouse sizes per environment are set in `config/settings.yaml`.",
        subject="warehouse sizes",
        reason="Cost reviews",
        cite=("config/settings.yaml",),
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="underscore name equal to its file name")

    m = Mem(
        "unquoted-timestamps",
        "project",
        "Timestamps left unquoted",
        "Airflow retries a failed task twice before the DAG run fails.",
        subject="airflow retries",
        reason="Paging only on real failures",
        cite=("dags/nightly.py",),
        age=30,
        fm={"status": None},
    )
    add(m)
    clean("invalid_file", m, note="empty status and unquoted timestamps")

    m = Mem(
        "explicit-nulls",
        "reference",
        "Citations with explicit nulls",
        "The staged orders come from stg_orders, built by dbt before orders_daily.",
        subject="staged orders",
        reason="Lineage",
        cite=(("sql/models/orders_daily.sql", None, None),),
        age=30,
        fm={"superseded_by": None, "supersedes": []},
    )
    add(m)
    clean("invalid_file", m, note="explicit nulls and empty lists")

    m = Mem(
        "unicode-body",
        "project",
        "Währungen und Beträge: € and £ amounts",
        "Amounts like “1.234,50 €” and “£1,234.50” are both parsed; the symbol decides the currency 💶.",
        subject="currency symbols",
        reason="Sources in three locales",
        cite=("pipeline/transforms.py",),
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="non-ASCII text")

    m = Mem(
        "commented-frontmatter",
        "project",
        "Frontmatter with comments",
        "The CRM source is paginated 500 contacts at a time.",
        subject="crm pagination",
        reason="API limit",
        cite=("pipeline/sources/crm.py",),
        style="flow",
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="comments and flow style")

    m = Mem(
        "hash-in-description",
        "reference",
        "Issue #4411: why the DAG pins pendulum",
        "The DAG pins pendulum because Airflow 2.9 needs it.",
        subject="pendulum pin",
        reason="Import errors",
        cite=("dags/nightly.py",),
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="# inside a quoted description")

    # ---------------------------------------------------------------- missing fields
    m = Mem(
        "sqlfluff-dialect",
        "reference",
        "SQL lint dialect",
        "sqlfluff lints the models with the snowflake dialect.",
        reason="Dialect errors",
        cite=("Makefile",),
        omit=("subject",),
        age=30,
    )
    add(m)
    plant("missing_field", m, note="no subject")

    m = Mem(
        "stage-views",
        "project",
        "Staging models are views",
        "Staging models are views, not tables.",
        subject="staging models",
        reason="",
        cite=("dags/nightly.py",),
        age=30,
    )
    add(m)
    plant("missing_field", m, note="empty reason")

    m = Mem(
        "airflow-version",
        "reference",
        "Airflow version",
        "The DAG runs on Airflow 2.9.",
        subject="airflow version",
        reason="Operator imports differ",
        age=30,
    )
    add(m)
    plant("missing_field", m, note="reference without citations")

    m = Mem(
        "blank-body",
        "project",
        "A memory with only blank lines",
        "\n   \n",
        subject="unknown",
        reason="Unknown",
        cite=("pipeline/load.py",),
        age=30,
    )
    add(m)
    plant("missing_field", m, note="blank fact")

    m = Mem(
        "Load-Order",
        "project",
        "Tables load in dependency order",
        "Dimension tables load before fact tables.",
        omit=("subject", "reason"),
        age=30,
    )
    add(m)
    plant(
        "missing_field", m, note="memory-tool style project memory: no subject, reason or citations"
    )

    m = Mem(
        "null-subject",
        "project",
        "A memory with a null subject",
        "Each source has its own Extractor instance.",
        subject=None,
        reason="Isolation",
        cite=("pipeline/extract.py",),
        fm={"subject": None},
        age=30,
    )
    add(m)
    plant("missing_field", m, note="subject: null")

    # look-alikes
    m = Mem(
        "pair-on-sql",
        "feedback",
        "SQL changes are reviewed in pairs",
        "Changes to the SQL models are reviewed by someone from finance analytics.",
        subject="sql review",
        reason="They own the numbers",
        age=30,
    )
    add(m)
    clean("missing_field", m)

    m = Mem(
        "user-is-analyst",
        "user",
        "The main user is an analyst",
        "The person running tasks here is a finance analyst who reads SQL but not Python.",
        subject="user background",
        reason="Explanations should lean on SQL",
        age=30,
    )
    add(m)
    clean("missing_field", m)

    m = Mem(
        "why-how-body",
        "project",
        "A body with Why and How to apply",
        "The nightly run alerts the data-oncall channel when it fails.",
        subject="failure alerts",
        reason="Failures must be seen before 07:00",
        cite=("dags/nightly.py",),
        age=30,
        more="**Why:** reports are due at 07:00.\n\n**How to apply:** do not silence the alert during backfills.",
    )
    add(m)
    clean("missing_field", m)

    m = Mem(
        "full-citation",
        "reference",
        "A citation with line and symbol",
        "`Scheduler.run_pending()` runs each due job and retries it up to its limit.",
        subject="scheduler run loop",
        reason="Understanding retries",
        cite=(("pipeline/scheduler.py", 30, "Scheduler.run_pending"),),
        age=30,
    )
    add(m)
    clean("missing_field", m)

    m = Mem(
        "keys-reordered",
        "project",
        "Frontmatter in another key order",
        "",
        raw=(
            "---\ntype: project\nsubject: dag concurrency\ndescription: Only one nightly run at a time\n"
            "citations:\n- path: dags/nightly.py\nreason: Two runs once merged the same day twice\n"
            "name: keys-reordered\n\n---\nThe nightly DAG never runs two instances at once.\n"
        ),
    )
    add(m)
    clean("invalid_file", m, note="keys in another order, a blank line inside")

    m = Mem(
        "folded-reason",
        "project",
        "A reason written as a folded scalar",
        "The loader refuses a batch whose columns differ from the table's.",
        subject="schema drift",
        reason="A renamed column silently\nloaded nulls for a week",
        cite=(("pipeline/load.py", None, "WarehouseLoader.merge"),),
        age=30,
    )
    add(m)
    clean("missing_field", m)

    m = Mem(
        "citation-line-only",
        "reference",
        "A citation with a line",
        "The nightly DAG's schedule string is the cron expression 0 2 * * *.",
        subject="dag cron",
        reason="Changing it moves every report",
        cite=(("dags/nightly.py", 10),),
        age=30,
    )
    add(m)
    clean("missing_field", m)

    m = Mem(
        "user-timezone-berlin",
        "user",
        "The analyst works in Berlin",
        "The analyst who reviews the numbers works in Berlin and reads reports at 08:00 local time.",
        subject="analyst working hours",
        reason="Reports must be ready before then",
        age=30,
    )
    add(m)
    clean("missing_field", m)

    ordinary(s)


def ordinary(s: Store) -> None:
    """Plain, clean memories (the small index and NOTES.md repositories reuse them)."""
    s.add(
        Mem(
            "staged-table-names",
            "project",
            "Staged table names",
            "Staged tables are named stg_<source> and dbt rebuilds them before the models.",
            subject="staged tables",
            reason="Lineage",
            cite=("dags/nightly.py",),
            age=80,
        ),
        Mem(
            "crm-request-timeout",
            "project",
            "CRM request timeout",
            "`fetch_contacts()` gives the CRM API 30 seconds per request.",
            subject="crm request timeout",
            reason="The CRM is slow at night",
            cite=(("pipeline/sources/crm.py", None, "fetch_contacts"),),
            age=80,
        ),
        Mem(
            "dag-id",
            "reference",
            "The nightly DAG's id",
            "The nightly DAG's id is tidewater_nightly.",
            subject="dag id",
            reason="Alert rules match on it",
            cite=("dags/nightly.py",),
            age=80,
        ),
        Mem(
            "crm-base-url",
            "reference",
            "CRM API base",
            "The CRM API is called under `CRM_BASE` (v3).",
            subject="crm api base",
            reason="v2 was switched off",
            cite=(("pipeline/sources/crm.py", None, "CRM_BASE"),),
            age=80,
        ),
        Mem(
            "quality-error",
            "project",
            "What a failed check raises",
            "Every data check raises `QualityError`, which the DAG turns into a failed task.",
            subject="quality failures",
            reason="One exception to catch",
            cite=("pipeline/quality.py",),
            age=80,
        ),
        Mem(
            "tidewater-entry-point",
            "reference",
            "The pipeline's command",
            "The package installs a tidewater command (`main()` in `pipeline/cli.py`).",
            subject="pipeline command",
            reason="Operators call it",
            cite=("pyproject.toml", "pipeline/cli.py"),
            age=80,
        ),
        Mem(
            "test-command-pipeline",
            "reference",
            "Pipeline tests",
            "Run the pipeline tests with `make test` (pytest over `tests/`).",
            subject="pipeline tests",
            reason="Before every merge",
            cite=("Makefile",),
            age=80,
        ),
    )


DOMAIN = Domain("tidewater", BEFORE, AFTER, describe, NOTES)
