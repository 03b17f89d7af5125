from app.ratelimit import TokenBucket


def test_bucket_empties_after_burst():
    bucket = TokenBucket(rate=60, burst=2)
    assert bucket.take() and bucket.take()
    assert not bucket.take()
