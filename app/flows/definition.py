"""Flow definition JSON and its validation.

Shape::

    {"start": "welcome",
     "nodes": {
       "welcome": {"verb": {"verb": "say", "text": "Hi"}, "next": "menu"},
       "menu":    {"verb": {"verb": "gather", "numDigits": 1, "say": {"text": "Press 1 or 2"}},
                   "branches": {"1": "sales", "2": "support"}, "default": "menu"},
       "sales":   {"verb": {"verb": "dial", "target": [{"type": "user", "name": "sales"}]}},
       "support": {"verb": {"verb": "queue", "name": "support"}}}}

Rules (all errors are collected, then raised together as ValidationFailed):
- every ``verb`` is validated by the verb schemas (app.verbs.parse_verb);
- ``branches``/``default`` only on gather nodes, which route on the collected digits (or the
  recognised speech, case-insensitively); a flow gather has no ``actionHook``;
- ``next`` only on verbs after which the call can continue (not dial/queue/conference/record/
  listen/hangup/redirect);
- every referenced node exists, every node is reachable from ``start``;
- a cycle must pass through a gather node: a loop that waits for no caller input would spin.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from app import limits
from app.errors import ValidationFailed
from app.verbs import Verb, VerbListRejected, parse_verb
from app.verbs.gather import Gather

NODE_ID = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")
BRANCH_KEY = re.compile(r"^[^\x00-\x1f]{1,64}$")
_NO_NEXT = {"hangup", "redirect"}
_NODE_KEYS = {"verb", "next", "branches", "default"}


@dataclass(frozen=True)
class FlowNode:
    id: str
    verb: Verb
    next: Optional[str] = None
    branches: dict[str, str] = field(default_factory=dict)
    default: Optional[str] = None

    def edges(self) -> list[str]:
        targets = [self.next, self.default, *self.branches.values()]
        return [t for t in targets if t is not None]

    def route(self, digits: str, speech: str) -> Optional[str]:
        """The gather branch for this input: digits exactly, else speech case-insensitively."""
        if digits and digits in self.branches:
            return self.branches[digits]
        spoken = speech.strip().lower()
        if spoken:
            for key, target in self.branches.items():
                if key.strip().lower() == spoken:
                    return target
        return self.default


@dataclass(frozen=True)
class Flow:
    start: str
    nodes: dict[str, FlowNode]


def _err(node: Optional[str], fld: Optional[str], message: str) -> dict[str, Any]:
    return {"node": node, "field": fld, "message": message}


def validate_flow(definition: Any) -> Flow:
    """Parse and check a stored flow; raises ValidationFailed(code="flow_invalid") listing
    every problem as ``{"node", "field", "message"}``."""
    errors: list[dict[str, Any]] = []
    if not isinstance(definition, dict):
        raise ValidationFailed("flow rejected", code="flow_invalid",
                               details=[_err(None, None, "A flow must be a JSON object.")])
    for key in sorted(set(definition) - {"start", "nodes"}):
        errors.append(_err(None, key, "Unknown field."))
    start = definition.get("start")
    raw_nodes = definition.get("nodes")
    if not isinstance(raw_nodes, dict) or not raw_nodes:
        errors.append(_err(None, "nodes", "nodes must be a non-empty object of id → node."))
        raise ValidationFailed("flow rejected", code="flow_invalid", details=errors)
    if len(raw_nodes) > limits.FLOW_MAX_NODES:
        errors.append(_err(None, "nodes", f"At most {limits.FLOW_MAX_NODES} nodes."))
        raise ValidationFailed("flow rejected", code="flow_invalid", details=errors)
    if not isinstance(start, str) or start not in raw_nodes:
        errors.append(_err(None, "start", "start must name one of the nodes."))

    nodes: dict[str, FlowNode] = {}
    for node_id, raw in raw_nodes.items():
        node = _parse_node(node_id, raw, raw_nodes, errors)
        if node is not None:
            nodes[node_id] = node
    if errors:
        raise ValidationFailed("flow rejected", code="flow_invalid", details=errors)

    _check_reachable(start, nodes, errors)  # type: ignore[arg-type]
    _check_cycles(nodes, errors)
    if errors:
        raise ValidationFailed("flow rejected", code="flow_invalid", details=errors)
    return Flow(start=start, nodes=nodes)  # type: ignore[arg-type]


def _parse_node(node_id: str, raw: Any, all_ids: dict, errors: list) -> Optional[FlowNode]:
    if not NODE_ID.match(node_id):
        errors.append(_err(node_id, None, "Node ids are 1-64 letters, digits, '_' or '-'."))
    if not isinstance(raw, dict):
        errors.append(_err(node_id, None, "A node must be an object with a 'verb'."))
        return None
    before = len(errors)
    for key in sorted(set(raw) - _NODE_KEYS):
        errors.append(_err(node_id, key, "Unknown field."))
    try:
        verb = parse_verb(raw.get("verb"))
    except VerbListRejected as exc:
        for e in exc.errors:
            fld = "verb" + (f".{e['field']}" if e["field"] and e["field"] != "verb" else "")
            errors.append(_err(node_id, fld, e["message"]))
        return None
    is_gather = isinstance(verb, Gather)
    nxt, branches, default = raw.get("next"), raw.get("branches"), raw.get("default")
    if is_gather:
        if verb.params.get("actionHook"):
            errors.append(_err(node_id, "verb.actionHook", "In a flow, gather routes with branches/default, not actionHook."))
        if nxt is not None:
            errors.append(_err(node_id, "next", "A gather node continues through branches/default."))
    else:
        if branches is not None or default is not None:
            errors.append(_err(node_id, "branches" if branches is not None else "default",
                               "Only gather nodes have branches/default."))
        if nxt is not None and (verb.ends_list or verb.name in _NO_NEXT):
            errors.append(_err(node_id, "next", f"Nothing runs after {verb.name!r}."))
    if branches is not None and not isinstance(branches, dict):
        errors.append(_err(node_id, "branches", "branches must map input (digits or words) to node ids."))
        branches = None
    for key, target in (branches or {}).items():
        if not BRANCH_KEY.match(key):
            errors.append(_err(node_id, f"branches.{key}", "Branch keys are 1-64 printable characters."))
        _check_ref(node_id, f"branches.{key}", target, all_ids, errors)
    for name, target in (("next", nxt), ("default", default)):
        if target is not None:
            _check_ref(node_id, name, target, all_ids, errors)
    if len(errors) > before:
        return None
    return FlowNode(id=node_id, verb=verb, next=nxt, branches=dict(branches or {}), default=default)


def _check_ref(node_id: str, fld: str, target: Any, all_ids: dict, errors: list) -> None:
    if not isinstance(target, str) or target not in all_ids:
        errors.append(_err(node_id, fld, f"Refers to unknown node {target!r}."))


def _check_reachable(start: str, nodes: dict[str, FlowNode], errors: list) -> None:
    seen, stack = {start}, [start]
    while stack:
        for target in nodes[stack.pop()].edges():
            if target not in seen:
                seen.add(target)
                stack.append(target)
    for node_id in nodes:
        if node_id not in seen:
            errors.append(_err(node_id, None, "Unreachable from start."))


def _check_cycles(nodes: dict[str, FlowNode], errors: list) -> None:
    """A cycle among non-gather nodes only would loop without waiting for the caller."""
    plain = {nid for nid, node in nodes.items() if not isinstance(node.verb, Gather)}
    WHITE, GREY, BLACK = 0, 1, 2
    color = {nid: WHITE for nid in plain}
    for root in sorted(plain):
        if color[root] != WHITE:
            continue
        color[root] = GREY
        stack = [(root, iter([t for t in nodes[root].edges() if t in plain]))]
        while stack:
            nid, children = stack[-1]
            child = next(children, None)
            if child is None:
                color[nid] = BLACK
                stack.pop()
            elif color[child] == GREY:
                errors.append(_err(child, None, "Cycle without a gather node: the flow would loop forever."))
                return
            elif color[child] == WHITE:
                color[child] = GREY
                stack.append((child, iter([t for t in nodes[child].edges() if t in plain])))
