from pipeline.load import BATCH_SIZE, WarehouseLoader


def test_merge_batches(fake_connection):
    WarehouseLoader(fake_connection).merge("orders", [{"id": n} for n in range(BATCH_SIZE + 1)], "id")
    assert len(fake_connection.executed) == 2
