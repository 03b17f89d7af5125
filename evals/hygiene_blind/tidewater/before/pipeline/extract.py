"""Pull raw exports from the sources into the raw bucket."""

from __future__ import annotations

import datetime as dt

import boto3

from pipeline.io import read_csv

S3_BUCKET = "tidewater-raw"


class Extractor:
    def __init__(self, source: str) -> None:
        self.source = source  # also the prefix in the bucket
        self.s3 = boto3.client("s3")

    def run(self, since: dt.date) -> list[str]:
        listing = self.s3.list_objects_v2(Bucket=S3_BUCKET, Prefix=f"{self.source}/{since:%Y-%m-%d}")
        return [item["Key"] for item in listing.get("Contents", [])]

    def run_incremental(self, cursor: str) -> list[str]:
        listing = self.s3.list_objects_v2(Bucket=S3_BUCKET, Prefix=self.source, StartAfter=cursor)
        return [item["Key"] for item in listing.get("Contents", [])]


def extract_orders(since: dt.date) -> int:
    rows = 0
    for key in Extractor("orders").run(since):
        for chunk in read_csv(f"s3://{S3_BUCKET}/{key}"):
            rows += len(chunk)
    return rows
