from __future__ import annotations

import marshmallow as ma


class TicketSchema(ma.Schema):
    ticket = ma.fields.String(metadata={"description": "Single use; open the stream with it as ?ticket="})
    expires_in_seconds = ma.fields.Integer(metadata={"description": "Unused after this long, it is refused"})
    stream_url = ma.fields.String(metadata={"description": "The stream's path with the ticket"})


class StreamQuerySchema(ma.Schema):
    ticket = ma.fields.String(required=True)
