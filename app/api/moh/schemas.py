from __future__ import annotations

import marshmallow as ma


class MohSchema(ma.Schema):
    name = ma.fields.String(metadata={"description": "What a queue's (or the queue verb's) moh names"})
    size_bytes = ma.fields.Integer(metadata={"description": "Of the stored 8 kHz mono 16-bit WAV"})
    duration_ms = ma.fields.Integer()
    updated_at = ma.fields.AwareDateTime()


class MohListSchema(ma.Schema):
    items = ma.fields.List(ma.fields.Nested(MohSchema))
