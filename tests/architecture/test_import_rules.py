"""The layers of README "Layout", enforced: who may import whom.

- ``esl`` is the Event Socket library: it imports nothing from ``app``.
- ``app.verbs`` (the verb language) imports neither call control (``app.voice``), the API,
  the CLI, nor the flow engine that runs it.
- ``app.voice`` (call control) is imported only by itself and the CLI.
- ``app.api`` is imported only by itself, the CLI and ``app.agent_channel`` (the agent's
  WebSocket, served by the API process with the API's request security).
- Domain packages (every other ``app`` package) import none of call control, the API, the
  CLI, the verb language or the flow engine; only ``app.flows`` (graphs of verbs) may use verbs.

Imports inside ``if TYPE_CHECKING:`` count too: a type-only import still couples the layers.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CALL_CONTROL = "app.voice"
VERBS = "app.verbs"
FLOWS = "app.flows"
API = "app.api"
AGENT_CHANNEL = "app.agent_channel"
CLI = "app.cli"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute module names imported anywhere in the file (relative imports resolved)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _forbidden(importer: str) -> tuple[str, ...]:
    """The packages ``importer`` may not import, per the rules in the module docstring."""
    if _within(importer, "esl"):
        return ("app",)
    if _within(importer, CLI):
        return ()
    if _within(importer, CALL_CONTROL):
        return (API, CLI)
    if _within(importer, API):
        return (CALL_CONTROL, CLI)
    if _within(importer, AGENT_CHANNEL):
        return (CALL_CONTROL, CLI, VERBS, FLOWS)
    if _within(importer, VERBS):
        return (CALL_CONTROL, API, CLI, FLOWS)
    if _within(importer, FLOWS):
        return (CALL_CONTROL, API, CLI)
    return (CALL_CONTROL, API, AGENT_CHANNEL, CLI, VERBS, FLOWS)


def _violations() -> list[str]:
    found = []
    for top in ("esl", "app"):
        for path in sorted((ROOT / top).rglob("*.py")):
            importer = _module_name(path)
            banned = _forbidden(importer)
            for name in sorted(_imports(path)):
                hit = next((p for p in banned if _within(name, p) and not _within(importer, p)), None)
                if hit:
                    found.append(f"{importer} imports {name} (a {hit} import is not allowed here)")
    return found


def test_every_package_imports_only_the_layers_its_rule_allows() -> None:
    assert _violations() == []


@pytest.mark.parametrize(("importer", "imported", "allowed"), [
    ("esl.outbound", "app.settings", False),
    ("app.verbs.queue", "app.voice.session", False),
    ("app.contact.endpoints", "app.verbs.dial", False),
    ("app.api.calls.resources", "app.voice.originator", False),
    ("app.cli.controller", "app.voice.controller", True),
    ("app.flows.runner", "app.verbs", True),
    ("app.voice.session", "app.verbs", True),
])
def test_the_rules_refuse_and_admit_the_documented_imports(importer: str, imported: str,
                                                           allowed: bool) -> None:
    banned = _forbidden(importer)
    assert (not any(_within(imported, p) and not _within(importer, p) for p in banned)) == allowed
