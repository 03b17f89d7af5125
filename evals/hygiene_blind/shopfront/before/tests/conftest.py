import pytest

from tests.fakes import FakeRepository


@pytest.fixture
def repo():
    return FakeRepository()
