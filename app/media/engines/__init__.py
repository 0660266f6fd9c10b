"""The engine registry and the one place an engine is built from ``cluster_config``.

``transcription.engine`` names the engine (``pocketsphinx`` by default: its model ships in
its wheel, so a fresh ``sbc run`` transcribes out of the box); ``transcription.whisper_model``
(a ggml file) and ``transcription.vosk_model`` (a model directory) say where the other two
find their model. A model that is missing or unusable raises ``ModelUnavailable`` naming the
setting, at worker start-up — never per job.
"""
from __future__ import annotations

from typing import Callable

from app.config import RuntimeConfig
from app.media.engines.base import Engine, ModelUnavailable, Segment
from app.media.engines.pocketsphinx_engine import PocketsphinxEngine
from app.media.engines.vosk_engine import VoskEngine, check_model_dir
from app.media.engines.whisper_engine import WhisperEngine, check_model_file


def _check_nothing(_config: RuntimeConfig) -> None:
    """pocketsphinx's model is inside its wheel."""


# name -> (build, check): ``check`` validates the model without loading it (cheap: the
# ``sbc workers`` parent runs it before starting any media worker).
REGISTRY: dict[str, tuple[Callable[[RuntimeConfig], Engine], Callable[[RuntimeConfig], None]]] = {
    "pocketsphinx": (lambda _c: PocketsphinxEngine(), _check_nothing),
    "whisper": (lambda c: WhisperEngine(c.whisper_model, threads=c.transcription_threads),
                lambda c: check_model_file(c.whisper_model)),
    "vosk": (lambda c: VoskEngine(c.vosk_model), lambda c: check_model_dir(c.vosk_model)),
}


def check_engine(config: RuntimeConfig) -> None:
    """Raise ``ModelUnavailable`` when the configured engine's model cannot be used."""
    REGISTRY[config.transcription_engine][1](config)


def load_engine(config: RuntimeConfig) -> Engine:
    check_engine(config)
    return REGISTRY[config.transcription_engine][0](config)


__all__ = ["Engine", "ModelUnavailable", "REGISTRY", "Segment", "check_engine", "load_engine"]
