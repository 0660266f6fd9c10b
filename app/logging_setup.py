"""One logging format for every process; chatty libraries kept at WARNING.

Every line names its process (``api``, ``controller``, ``workers``, ``run``, ... — the ``sbc``
sub-command) and pid, because under ``sbc run`` the three children share one stderr.
``SBC_LOG_FORMAT=json`` writes one JSON object per line instead (``ts``, ``level``,
``process``, ``pid``, ``logger``, ``message``, and ``exc`` with the traceback), for log shippers.
"""
from __future__ import annotations

import json
import logging
import os
from datetime import datetime, timezone

QUIET_LIBRARIES = ("pika", "urllib3", "alembic.runtime.migration")
TEXT_FORMAT = "%(asctime)s %(sbc_process)s[%(process)d] %(levelname)s %(name)s %(message)s"
FORMATS = ("text", "json")


class _ProcessName(logging.Filter):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.process_name = name

    def filter(self, record: logging.LogRecord) -> bool:
        record.sbc_process = self.process_name
        return True


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {"ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
                "level": record.levelname, "process": getattr(record, "sbc_process", "sbc"),
                "pid": record.process, "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def _process_name() -> str:
    """The running ``sbc`` sub-command (``api``, ``controller``, ...), else the program name."""
    import click

    ctx = click.get_current_context(silent=True)
    return ctx.info_name if ctx is not None and ctx.info_name else "sbc"


def configure_logging(process: str | None = None) -> None:
    level = os.environ.get("SBC_LOG_LEVEL", "INFO").upper()
    fmt = os.environ.get("SBC_LOG_FORMAT", "text").lower()
    if fmt not in FORMATS:
        raise ValueError(f"SBC_LOG_FORMAT must be one of {', '.join(FORMATS)}")
    handler = logging.StreamHandler()
    handler.addFilter(_ProcessName(process or _process_name()))
    handler.setFormatter(JsonLines() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(logging.WARNING)
