"""The verb language: webhook/app_json/flow instructions → FreeSWITCH applications over ESL.

Public entry points: ``parse_verb_list`` (validate a whole reply), ``run_verbs`` (execute it
against a VerbContext), ``REGISTRY`` and ``verb_list_json_schema``.
"""
from app.verbs.base import OutcomeKind, Verb, VerbOutcome
from app.verbs.context import VerbContext
from app.verbs.errors import VerbListRejected
from app.verbs.executor import run_verbs
from app.verbs.registry import REGISTRY, VerbList, parse_verb, parse_verb_list

__all__ = ["REGISTRY", "OutcomeKind", "Verb", "VerbContext", "VerbList", "VerbListRejected",
           "VerbOutcome", "parse_verb", "parse_verb_list", "run_verbs"]
