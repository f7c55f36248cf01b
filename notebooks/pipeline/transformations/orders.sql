-- SQL tables downstream of the Python streaming table orders_raw (orders.py).

-- Each order once, parsed: a streaming table reads only the records orders_raw added since its last run.
CREATE STREAMING TABLE orders_checked AS
SELECT order_id,
       CAST(get_json_object(payload, '$.amount') AS DOUBLE) AS amount,
       get_json_object(payload, '$.country') AS country,
       CAST(get_json_object(payload, '$.amount') AS DOUBLE) >= 100 AS large
FROM STREAM(orders_raw);

-- Totals per country, recomputed from all orders on each run.
CREATE MATERIALIZED VIEW orders_by_country AS
SELECT country, count(*) AS orders, round(sum(amount), 2) AS total
FROM orders_checked
GROUP BY country;
