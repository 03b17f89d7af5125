-- customers_dim: slowly changing dimension (type 2), rebuilt weekly
create or replace table customers_dim as
select customer_id, email, country, valid_from, coalesce(valid_to, '9999-12-31') as valid_to
from stg_customers;
