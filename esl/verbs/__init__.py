"""The verb language: webhook/app_json/flow instructions → FreeSWITCH applications over ESL.

Public entry points: ``parse_verb_list`` (validate a whole reply), ``run_verbs`` (execute it
against a VerbContext), ``REGISTRY`` and ``verb_list_json_schema``.
"""
from esl.verbs.base import OutcomeKind, Verb, VerbOutcome
from esl.verbs.context import VerbContext
from esl.verbs.errors import VerbListRejected
from esl.verbs.executor import run_verbs
from esl.verbs.registry import REGISTRY, VerbList, parse_verb, parse_verb_list

__all__ = ["REGISTRY", "OutcomeKind", "Verb", "VerbContext", "VerbList", "VerbListRejected",
           "VerbOutcome", "parse_verb", "parse_verb_list", "run_verbs"]
