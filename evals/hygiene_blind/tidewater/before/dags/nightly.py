"""The nightly DAG: extract, stage, load."""

from airflow import DAG
from airflow.operators.bash import BashOperator
import pendulum

with DAG(
    "tidewater_nightly",
    schedule="0 2 * * *",
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    catchup=False,
) as dag:
    extract = BashOperator(task_id="extract", bash_command="python -m pipeline.cli run --since yesterday")
    stage = BashOperator(task_id="stage", bash_command="dbt run --select stg_*")
    load = BashOperator(task_id="load", bash_command="dbt run --select orders_daily")
    extract >> stage >> load
