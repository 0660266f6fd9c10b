from __future__ import annotations

import marshmallow as ma
from marshmallow import validate


class CallFlowWriteSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=validate.Length(min=1, max=255))
    definition = ma.fields.Dict(required=True, metadata={
        "description": "Flow graph {start, nodes}; see docs/api.md. Validated on save (422 flow_invalid)"})


class CallFlowPatchSchema(CallFlowWriteSchema):
    """PATCH body (instantiate with partial=True)."""


class CallFlowSchema(ma.Schema):
    id = ma.fields.UUID()
    name = ma.fields.String()
    definition = ma.fields.Dict()
    created_at = ma.fields.AwareDateTime()
    updated_at = ma.fields.AwareDateTime()


class FlowCheckSchema(ma.Schema):
    definition = ma.fields.Raw(required=True, metadata={"description": "The flow graph to check (not saved)"})


class _FlowProblemSchema(ma.Schema):
    node = ma.fields.String(allow_none=True)
    field = ma.fields.String(allow_none=True)
    message = ma.fields.String()


class FlowVerdictSchema(ma.Schema):
    valid = ma.fields.Boolean()
    errors = ma.fields.List(ma.fields.Nested(_FlowProblemSchema))
