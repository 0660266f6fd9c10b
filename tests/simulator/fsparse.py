"""FreeSWITCH's own argument parsing, ported so the simulator reads commands exactly as the
switch does (a simulator kinder than the switch hides bugs: issue 9 item 4).

- ``separate_blank``: ``switch_separate_string(buf, ' ', argv, max)`` of switch_utils.c
  (v1.10.12): space-separated, a backslash escapes the next character, single quotes group
  and are removed, and once ``max`` parts are taken the last one keeps the rest of the text.
- ``originate_parts``: how mod_commands' ``originate`` splits its argument (``argv[10]``,
  2 to 7 parts) and how it reads ``&app(args)``: the application data ends at the *first*
  ``)`` and starts after the first ``(``, so an unquoted ``&socket(h:p async full)`` becomes
  the application ``socket`` with data ``h:p`` (``async`` and ``full)`` land in the dialplan
  and context slots).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

ORIGINATE_MAX_ARGS = 10          # mod_commands.c originate_function: char *argv[10]
ORIGINATE_MIN_ARGS, ORIGINATE_ARGS_LIMIT = 2, 7
_UNESCAPE = {"n": "\n", "r": "\r", "t": "\t", "s": " "}
_UNESCAPED = r"(?<!\\)"


def _cleanup(token: str) -> str:
    """cleanup_separated_string(str, 0): drop quotes, unescape, trim leading/trailing spaces."""
    i = 0
    while i < len(token) and token[i] == " ":
        i += 1
    out: list[str] = []
    end: Optional[int] = None
    inside = False
    while i < len(token):
        ch = token[i]
        if ch == "\\" and i + 1 < len(token):
            nxt = token[i + 1]
            if nxt in ("'", '"', "\\") or nxt in _UNESCAPE:
                out.append(_UNESCAPE.get(nxt, nxt))
                end = len(out)
                i += 2
                continue
        if ch == "'" and (inside or "'" in token[i + 1:]):
            inside = not inside
            if inside:
                end = len(out)
        else:
            out.append(ch)
            if ch != " " or inside:
                end = len(out)
        i += 1
    return "".join(out[:end]) if end is not None else ""


def separate_blank(text: str, max_parts: int) -> list[str]:
    """switch_separate_string(text, ' ', argv, max_parts) (separate_string_blank_delim)."""
    starts: list[int] = []
    ends: list[int] = []
    state, i, inside = "start", 0, False
    while i < len(text) and len(starts) < max_parts:
        ch = text[i]
        if state == "start":
            starts.append(i)
            ends.append(len(text))
            state = "skip_initial"
        elif state == "skip_initial":
            if ch == " ":
                i += 1
            else:
                state = "find"
        elif state == "find":
            if ch == "\\":
                i += 1
            elif ch == "'":
                inside = not inside
            elif ch == " " and not inside:
                ends[-1] = i
                state = "skip_ending"
            i += 1
        else:  # skip_ending
            if ch == " ":
                i += 1
            else:
                state = "start"
    return [_cleanup(text[s:e]) for s, e in zip(starts, ends)]


@dataclass(frozen=True)
class Originate:
    dial_string: str
    exten: str
    app: Optional[str]        # ``&app(...)`` form: the application name
    app_data: Optional[str]   # and its data, cut the way mod_commands cuts it
    dialplan: Optional[str]
    context: Optional[str]


def originate_parts(arg: str) -> Optional[Originate]:
    """The originate API's reading of ``arg``; None where it answers ``-USAGE``."""
    argv = separate_blank(arg, ORIGINATE_MAX_ARGS)
    if not ORIGINATE_MIN_ARGS <= len(argv) <= ORIGINATE_ARGS_LIMIT:
        return None
    argv = [None if a.lower() == "undef" else a for a in argv] + [None] * ORIGINATE_MAX_ARGS
    dial_string, exten = argv[0] or "", argv[1] or ""
    app = data = None
    if exten.startswith("&") and len(exten) > 1:
        app = exten[1:]
        close = app.find(")")
        if close >= 0:
            app = app[:close]
        open_ = app.find("(")
        if open_ >= 0:
            app, data = app[:open_], app[open_ + 1:]
    return Originate(dial_string, exten, app, data, argv[2], argv[3])


def _top_level_legs(rest: str) -> list[str]:
    """Split on the leg separators outside ``[...]``: ``|`` (one after another), ``,`` and
    ``:_:`` (rung at once, switch_ivr_originate: the first to answer wins)."""
    legs, depth, start, i = [], 0, 0, 0
    while i < len(rest):
        ch = rest[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        elif depth == 0 and ch in "|,":
            legs.append(rest[start:i])
            start = i + 1
        elif depth == 0 and rest.startswith(":_:", i):
            legs.append(rest[start:i])
            start = i = i + 3
            continue
        i += 1
    legs.append(rest[start:])
    return legs


def dial_legs(dial_string: str) -> tuple[dict[str, str], list[tuple[dict[str, str], str]]]:
    """``{globals}[leg vars]endpoint|[leg vars]endpoint`` (or ``,`` / ``:_:`` between legs rung
    at once) → (globals, [(leg vars, endpoint)])."""
    global_vars: dict[str, str] = {}
    rest = dial_string
    head = re.match(r"\{((?:[^}\\]|\\.)*)\}", rest)
    if head:
        global_vars = _variables(head.group(1))
        rest = rest[head.end():]
    legs = []
    for leg in _top_level_legs(rest):
        block = re.match(r"\[((?:[^]\\]|\\.)*)\]", leg)
        legs.append((_variables(block.group(1)) if block else {}, leg[block.end():] if block else leg))
    return global_vars, legs


def _variables(block: str) -> dict[str, str]:
    out = {}
    for item in re.split(_UNESCAPED + ",", block):
        name, _, value = item.partition("=")
        if name:
            out[name] = value.replace("\\,", ",")
    return out


def bridge_exports(dial_string: str, answered_leg: int) -> dict[str, str]:
    """What the caller's leg receives when leg ``answered_leg`` of a bridge answers: the
    variables its ``bridge_export_vars`` lists, from that leg's ``[]`` or the ``{}`` block
    (switch_ivr_bridge.c check_bridge_export → switch_channel_process_export), plus the list."""
    global_vars, legs = dial_legs(dial_string)
    if not 0 <= answered_leg < len(legs):
        return {}
    peer = {**global_vars, **legs[answered_leg][0]}
    names = [n for n in peer.get("bridge_export_vars", "").split(",") if n]
    out = {n: peer[n] for n in names if n in peer}
    if names:
        out["bridge_export_vars"] = peer["bridge_export_vars"]
    return out
