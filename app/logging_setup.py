"""One logging format for every process; chatty libraries kept at WARNING."""
from __future__ import annotations

import logging
import os

QUIET_LIBRARIES = ("pika", "urllib3", "alembic.runtime.migration")


def configure_logging() -> None:
    level = os.environ.get("SBC_LOG_LEVEL", "INFO").upper()
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(logging.WARNING)
