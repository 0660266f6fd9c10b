"""The verb registry and the all-or-nothing list parser.

REGISTRY is an explicit name → class dict: a verb name from a webhook reply is only ever a key
into it, never an attribute lookup.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

from marshmallow import ValidationError

from app import limits
from app.verbs.base import Verb
from app.verbs.campaign_wait import CampaignWait
from app.verbs.conference import Conference
from app.verbs.dial import Dial
from app.verbs.errors import VerbError, VerbListRejected
from app.verbs.gather import Gather
from app.verbs.hangup import Hangup
from app.verbs.listen import Listen
from app.verbs.pause import Pause
from app.verbs.play import Play
from app.verbs.queue import Queue
from app.verbs.record import Record
from app.verbs.redirect import Redirect
from app.verbs.say import Say
from app.verbs.tag import Tag

REGISTRY: dict[str, type[Verb]] = {
    "say": Say,
    "play": Play,
    "gather": Gather,
    "dial": Dial,
    "queue": Queue,
    "conference": Conference,
    "record": Record,
    "listen": Listen,
    "pause": Pause,
    "hangup": Hangup,
    "redirect": Redirect,
    "tag": Tag,
}
# REGISTRY plus the verbs only lists the platform builds may use (an application with no id:
# app/calls/route.py); a customer's reply, app_json or flow is parsed against REGISTRY alone.
PLATFORM_REGISTRY: dict[str, type[Verb]] = {**REGISTRY, "campaign_wait": CampaignWait}


class VerbList(list):
    """The accepted verbs, plus warnings about items that can never run.

    Verbs after dial/queue/conference/record/listen are dropped with a warning rather than
    rejecting the reply: SPEC says they "never run", not that the reply is invalid.
    """

    def __init__(self, verbs: Iterable[Verb] = (), warnings: Optional[list[VerbError]] = None) -> None:
        super().__init__(verbs)
        self.warnings: list[VerbError] = list(warnings or [])


def _flatten(messages: Any, path: tuple[str, ...] = ()) -> Iterable[tuple[Optional[str], str]]:
    """marshmallow's nested message dict → (dotted field path, message) pairs."""
    if isinstance(messages, dict):
        for key, value in messages.items():
            sub = path if key == "_schema" else path + (str(key),)
            yield from _flatten(value, sub)
    elif isinstance(messages, (list, tuple)):
        for item in messages:
            yield from _flatten(item, path)
    else:
        yield (".".join(path) or None), str(messages)


def item_errors(index: Optional[int], item: Any,
                registry: dict[str, type[Verb]] = REGISTRY) -> tuple[Optional[Verb], list[VerbError]]:
    """Validate one instruction object; returns the verb or the errors about it."""
    if not isinstance(item, dict):
        return None, [{"index": index, "verb": None, "field": None,
                       "message": "Each instruction must be a JSON object with a 'verb' field."}]
    name = item.get("verb")
    if not isinstance(name, str) or not name:
        return None, [{"index": index, "verb": None, "field": "verb",
                       "message": "Missing 'verb': each instruction names its verb."}]
    verb_class = registry.get(name)
    if verb_class is None:
        return None, [{"index": index, "verb": name, "field": "verb",
                       "message": f"Unknown verb {name!r}; known verbs: {', '.join(REGISTRY)}."}]
    try:
        return verb_class.from_data(item), []
    except ValidationError as exc:
        return None, [{"index": index, "verb": name, "field": field, "message": message}
                      for field, message in _flatten(exc.messages)]


def parse_verb(item: Any) -> Verb:
    """One verb (a flow node); raises VerbListRejected with index None."""
    verb, errors = item_errors(None, item)
    if errors:
        raise VerbListRejected(errors, "verb rejected")
    assert verb is not None
    return verb


def parse_verb_list(data: Any, registry: dict[str, type[Verb]] = REGISTRY) -> VerbList:
    """Validate the WHOLE list before anything runs (SPEC "Verbs": all or nothing).

    Raises VerbListRejected listing every error when the data is not a non-empty array, or
    when any item is unknown or invalid. ``registry``: PLATFORM_REGISTRY for a list the
    platform built, never for anything a customer wrote.
    """
    if not isinstance(data, list):
        raise VerbListRejected([{"index": None, "verb": None, "field": None,
                                 "message": "Instructions must be a JSON array of verb objects."}])
    if not data:
        raise VerbListRejected([{"index": None, "verb": None, "field": None,
                                 "message": "Empty array: at least one verb is required."}])
    if len(data) > limits.VERB_LIST_MAX_VERBS:
        raise VerbListRejected([{"index": None, "verb": None, "field": None,
                                 "message": f"At most {limits.VERB_LIST_MAX_VERBS} verbs per list."}])
    verbs: list[Verb] = []
    errors: list[VerbError] = []
    for index, item in enumerate(data):
        verb, item_errs = item_errors(index, item, registry)
        errors.extend(item_errs)
        if verb is not None:
            verbs.append(verb)
    if errors:
        raise VerbListRejected(errors)
    return _truncate_after_handover(verbs)


def _truncate_after_handover(verbs: list[Verb]) -> VerbList:
    for index, verb in enumerate(verbs):
        if verb.ends_list and index + 1 < len(verbs):
            warnings: list[VerbError] = [
                {"index": later, "verb": verbs[later].name, "field": None,
                 "message": f"Never runs: {verb.name!r} at index {index} ends the list."}
                for later in range(index + 1, len(verbs))]
            return VerbList(verbs[: index + 1], warnings)
    return VerbList(verbs)
