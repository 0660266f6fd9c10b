"""``POST /api/call-flows/validate``: a flow definition checked without saving it, by the flow
engine's own parser (``app.flows.validate_flow``) and the save's URL guard, so the visual editor
can pin every problem on its node before the save."""
from __future__ import annotations

from typing import Any

from app.api.applications.service import verb_url_problems
from app.errors import ValidationFailed
from app.flows import validate_flow


def check_flow(definition: Any) -> dict[str, Any]:
    """``{"valid", "errors": [{"node", "field", "message"}]}``, the details 422 flow_invalid carries."""
    try:
        validate_flow(definition)
    except ValidationFailed as exc:
        return {"valid": False, "errors": list(exc.details or [])}
    errors = []
    for path, message in verb_url_problems(definition):
        parts = path.split("/")[1:]  # /nodes/<id>/verb/<field...>
        node = parts[1] if len(parts) > 1 and parts[0] == "nodes" else None
        errors.append({"node": node, "field": ".".join(parts[2:]) or None, "message": message})
    return {"valid": not errors, "errors": errors}
