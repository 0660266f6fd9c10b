"""Stored call flows: a graph of verb nodes with branches, run with the same verb classes as
webhook replies (so a flow can do nothing a reply cannot, and vice versa)."""
from app.flows.definition import Flow, FlowNode, validate_flow
from app.flows.runner import FlowRunner

__all__ = ["Flow", "FlowNode", "FlowRunner", "validate_flow"]
