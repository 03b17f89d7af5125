create index payments_order on payments (order_id);
