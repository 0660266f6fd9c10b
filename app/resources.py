"""Product files that are not Python modules: the Alembic chain (``alembic.ini``,
``migrations/``) and FreeSWITCH's module contract (``fs-conf/autoload_configs/modules.conf.xml``).

In a checkout or an editable install they are read where they are. A built wheel (``pip install
.``) installs them under ``<prefix>/share/saas-sbc/`` (setup.cfg ``[options.data_files]``), so
``sbc db upgrade`` and the controller's module check work outside a checkout too.
"""
from __future__ import annotations

import sys
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[1]
INSTALLED_ROOT = Path(sys.prefix) / "share" / "saas-sbc"


def product_file(relative: str) -> Path:
    """``relative`` (e.g. ``"migrations"``) in the checkout when present, else where a wheel
    installed it."""
    in_source = SOURCE_ROOT / relative
    return in_source if in_source.exists() else INSTALLED_ROOT / relative
