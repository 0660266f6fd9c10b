"""The common shape of every verb: a marshmallow schema, parse → execute(ctx) → outcome.

A verb object is immutable once parsed: ``params`` holds the validated values with defaults
filled in, so execution never re-validates and a flow can run the same node many times.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Optional

from marshmallow import RAISE, Schema, fields

if TYPE_CHECKING:  # pragma: no cover
    from app.verbs.context import VerbContext


class _RaiseOnUnknown(Schema.Meta):
    """The one Meta of verbs and their parts (a schema that is both, like ``play``, inherits
    the same class from both bases)."""

    unknown = RAISE


class VerbSchema(Schema):
    """Base of every verb schema: unknown fields are errors (a typo must not pass silently)."""

    Meta = _RaiseOnUnknown

    verb = fields.String(required=True)

    # Extra JSON Schema keywords for cross-field rules, declared next to the validator that
    # enforces them (see app.verbs.jsonschema).
    json_schema_extra: ClassVar[dict[str, Any]] = {}


class PartSchema(Schema):
    """Nested objects inside a verb (gather prompt, dial target)."""

    Meta = _RaiseOnUnknown

    json_schema_extra: ClassVar[dict[str, Any]] = {}


class OutcomeKind(str, Enum):
    CONTINUE = "continue"   # run the next verb
    REPLACE = "replace"     # drop what is left, run ``verbs`` instead (hook replies)
    END = "end"             # the list is over (handed over, hung up, or nothing to do)


class VerbsReplaced(Exception):
    """Thrown into a running verb when the call's verb list is replaced from outside (a live
    ``redirect`` or a transfer from the API or an agent). A verb that keeps books on how it
    ended (the queue: abandoned or not) reads this as "moved on", never as the caller leaving."""


@dataclass(frozen=True)
class VerbOutcome:
    kind: OutcomeKind
    verbs: Optional[list["Verb"]] = None
    reason: Optional[str] = None
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def cont(cls, /, **data: Any) -> "VerbOutcome":
        return cls(OutcomeKind.CONTINUE, data=data)

    @classmethod
    def replace(cls, verbs: Optional[list["Verb"]], /, **data: Any) -> "VerbOutcome":
        """A hook reply. None (empty body) means no instructions: the call ends (SPEC "Errors")."""
        if verbs is None:
            return cls(OutcomeKind.END, reason="no_instructions", data=data)
        return cls(OutcomeKind.REPLACE, verbs=list(verbs), data=data)

    @classmethod
    def end(cls, reason: str, /, **data: Any) -> "VerbOutcome":
        return cls(OutcomeKind.END, reason=reason, data=data)


class Verb(ABC):
    name: ClassVar[str]
    schema_class: ClassVar[type[VerbSchema]]
    # dial, queue, conference, record, listen hand the call over: the list ends with them.
    ends_list: ClassVar[bool] = False
    _schema: ClassVar[Optional[VerbSchema]] = None

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = params

    @classmethod
    def schema(cls) -> VerbSchema:
        # One instance per class: loading is stateless and the schema build is the costly part.
        if cls.__dict__.get("_schema") is None:
            cls._schema = cls.schema_class()
        return cls._schema  # type: ignore[return-value]

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "Verb":
        """Validate one item; raises marshmallow.ValidationError with per-field messages."""
        return cls(cls.schema().load(data))

    @abstractmethod
    def execute(self, ctx: "VerbContext") -> VerbOutcome:
        """Run on the call; ``esl.errors.ChannelHungUp`` propagates when the caller hangs up."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.params!r}>"
