from app.ratelimit import RateLimiter


def test_bucket_empties_after_burst():
    bucket = RateLimiter(rate=2)
    assert bucket.allow("k") and bucket.allow("k")
    assert not bucket.allow("k")
