from app.api.orders import create_order, list_orders


def test_total_ignores_client_total(fake_request):
    request = fake_request(json={"items": [{"unit_cents": 250, "quantity": 2}], "total": 1})
    assert create_order(request)["amount_cents"] == 500


def test_first_page_has_default_size(fake_request, orders_60):
    assert len(list_orders(fake_request(query={}))["orders"]) == 50
