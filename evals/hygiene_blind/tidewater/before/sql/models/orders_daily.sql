-- orders_daily: one row per day and currency, rebuilt every night
create or replace table orders_daily as
select date_trunc('day', ordered_at) as day, currency, count(*) as orders, sum(amount_eur) as amount_eur
from stg_orders
group by 1, 2;
