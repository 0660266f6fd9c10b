"""SIP target host bodies."""
from __future__ import annotations

import marshmallow as ma
from marshmallow import validate


class SipTargetCreateSchema(ma.Schema):
    host = ma.fields.String(required=True, validate=validate.Length(min=1, max=255), metadata={
        "description": "A domain name (exact: subdomains are not included) or an IP address; "
                       "must resolve to public addresses only"})


class SipTargetSchema(ma.Schema):
    id = ma.fields.UUID()
    host = ma.fields.String()
    created_at = ma.fields.AwareDateTime()
