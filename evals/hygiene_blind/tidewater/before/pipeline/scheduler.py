"""A small cron-style scheduler for the jobs outside Airflow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_TZ = "UTC"


@dataclass
class Job:
    name: str
    cron: str
    run: Callable[[], None]
    max_retries: int = 3


class Scheduler:
    def __init__(self, tz: str = DEFAULT_TZ) -> None:
        self.tz = tz
        self.jobs: list[Job] = []

    def schedule(self, name: str, cron: str, run: Callable[[], None], *, max_retries: int = 3) -> Job:
        """Cron expressions are read in the scheduler's time zone (UTC unless told)."""
        job = Job(name, cron, run, max_retries)
        self.jobs.append(job)
        return job

    def run_pending(self, due: Callable[[Job], bool]) -> None:
        for job in self.jobs:
            if due(job):
                for attempt in range(job.max_retries + 1):
                    try:
                        job.run()
                        break
                    except Exception:
                        if attempt == job.max_retries:
                            raise
