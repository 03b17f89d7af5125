create index orders_customer_created on orders (customer_id, created_at);
