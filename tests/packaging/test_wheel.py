"""A non-editable ``pip install .`` gives a working ``sbc`` (issue 13): the wheel is built from a
copy of the sources, installed into a fresh virtualenv whose only other path is the test venv's
site-packages (the dependencies, not our editable install), and run from a folder that is not a
checkout: every package imports, ``sbc db upgrade`` migrates a scratch database, and the
controller's module contract is found.

Takes about 15 s (wheel build + virtualenv): one test, run with the suite."""
from __future__ import annotations

import shutil
import site
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.plugins.database import _maintenance, _quote_ident
from tests.plugins.skips import skip_or_fail_in_ci

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("setup.cfg", "pyproject.toml", "README.md", "alembic.ini", "app", "esl", "migrations",
           "fs-conf/autoload_configs/modules.conf.xml")


def _run(*args, **kw) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, **kw)
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """bin/ of a virtualenv with the built wheel installed (not editable)."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    for name in SOURCES:
        target = src / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, target)
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "-q", "-w", work / "dist", src)
    (wheel,) = (work / "dist").glob("saas_sbc-*.whl")
    venv = work / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    purelib = Path(_run(venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    # the dependencies come from the test venv; its .pth files (our editable finder) are not read
    (purelib / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    _run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--no-deps",
         "--no-index", "--disable-pip-version-check", "-q", wheel)
    return venv / "bin"


def test_given_the_built_wheel_then_every_package_imports_from_the_install_not_the_checkout(installed, tmp_path):
    probe = ("import pkgutil, app, esl\n"
             "names = [m.name for p in (app, esl) for m in pkgutil.walk_packages(p.__path__, p.__name__ + '.')]\n"
             "for n in names:\n    if not n.endswith('__main__'): __import__(n)\n"
             "import app.calls.limiter, app.ops.metrics\n"
             "print(app.__file__)\n"
             "from app.routing.node_modules import contract_modules\n"
             "print(len(contract_modules()))\n")
    out = _run(installed / "python", "-c", probe, cwd=tmp_path).stdout.split()
    assert "site-packages" in out[0] and str(ROOT) not in out[0]
    assert int(out[1]) >= 20
    assert "tenant" in _run(installed / "sbc", "--help", cwd=tmp_path).stdout


def test_given_the_built_wheel_when_sbc_db_upgrade_runs_outside_a_checkout_then_it_migrates(installed, tmp_path):
    from app.settings import get_settings

    url = make_url(get_settings().database_url).set(database=f"sbc_wheel_{uuid.uuid4().hex[:10]}")
    env = {"PATH": "/usr/bin:/bin", "SBC_DATABASE_URL": url.render_as_string(hide_password=False)}
    try:
        result = _run(installed / "sbc", "db", "upgrade", cwd=tmp_path, env=env)
        assert "latest migration" in result.stdout
    finally:
        _maintenance(f"DROP DATABASE IF EXISTS {_quote_ident(url.database)} WITH (FORCE)")


def test_given_the_built_wheel_then_it_carries_the_built_console_so_sbc_api_serves_it_without_node(installed, tmp_path):
    built = ROOT / "app" / "api" / "console" / "static"
    if not (built / "index.html").is_file():
        skip_or_fail_in_ci("the console is not built (bash scripts/install builds web/ before the wheel)")
    probe = ("from app.api.console import STATIC_DIR\n"
             "print(STATIC_DIR)\n"
             "print(' '.join(sorted(p.name for p in (STATIC_DIR / 'assets').iterdir())))\n")
    where, assets = _run(installed / "python", "-c", probe, cwd=tmp_path).stdout.splitlines()
    assert "site-packages" in where and (Path(where) / "index.html").read_bytes() == (built / "index.html").read_bytes()
    assert assets.split() == sorted(p.name for p in (built / "assets").iterdir())
