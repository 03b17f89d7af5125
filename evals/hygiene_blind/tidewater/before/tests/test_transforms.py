from pipeline.transforms import dedupe_rows, normalize_ts


def test_dedupe_keeps_last():
    rows = [{"order_id": 1, "v": "a"}, {"order_id": 1, "v": "b"}]
    assert dedupe_rows(rows) == [{"order_id": 1, "v": "b"}]


def test_naive_timestamps_are_utc():
    assert normalize_ts("2026-01-01T10:00:00").utcoffset().total_seconds() == 0
