"""The judgment store's keys: everything that decides a debate's outcome, hashed.

A debate's key is a sha256 over its panel's fingerprint and every request the debate would
send, walked with placeholders as ``chateval preview`` walks it (debate/preview.py): each
request's messages as the referee reads them (the item's texts after context fitting, the
order its answers are shown in, the role texts, the prompt templates and layout, the strategy's
visibility, the rounds, summaries, probes and early-stop checks), its token budget, its
constraint (the verdict format and scale) and its decoding settings (temperature; top-p and the
seed only when sampling, since greedy decoding ignores them: the seed is the bootstrap's too).

The panel's fingerprint adds what the requests do not show: each model's weights and tokenizer
(a content digest of its folder, cached by the store per file's size and modification time,
so gigabytes are read once), the engine that decodes it, its dtype, context length, chat
template and engine arguments, or the server and served name of a model on a server, and
``DEBATE_FORMAT``, the version of how results become utterances. Nothing else is in a key: a
run's name, its output folder, its statistics, scheduling, placement and replicas do not
change a debate, and do not miss the store.
"""

import hashlib
import json
import logging
from dataclasses import asdict, dataclass
from typing import Any

from chateval.core.backend import GenerationRequest
from chateval.core.items import DirectItem, PairwiseItem
from chateval.core.transcript import Debate, Turn
from chateval.debate.panel import Panel
from chateval.debate.preview import walk_requests
from chateval.engines.factory import Engines
from chateval.engines.models import ModelRegistry
from chateval.errors import ConfigError
from chateval.run.session import Session
from chateval.store.judgments import JudgmentStore

log = logging.getLogger(__name__)

# Bump when the same completions would become other utterances (the panel's processing of a
# result: names stripped, assessments cut, verdicts settled): every stored debate then misses.
DEBATE_FORMAT = 1


@dataclass(frozen=True)
class DebateKeys:
    """The keys of one panel's debates: ``fingerprint`` the panel's, ``description`` a line
    that names it for ``chateval cache``."""

    fingerprint: str
    description: str
    panel: Panel

    def key(self, debate: Debate) -> str:
        """The store key of ``debate`` (an item in one answer order, after context fitting)."""
        return _digest({"panel": self.fingerprint, "requests": _walk(self.panel, debate)})


def debate_keys(session: Session, store: JudgmentStore) -> DebateKeys | None:
    """The keys of ``session``'s debates; None when a model has nothing to fingerprint (a
    backend handed in under a name the registry does not know): its debates are not stored,
    and the run says so."""
    models: dict[str, Any] = {}
    for model in session.models:
        facts = _model_facts(session, model, store)
        if facts is None:
            log.warning(
                "judgment store: model %r has no folder or server to fingerprint; this run neither "
                "reuses nor stores debates",
                model,
            )
            return None
        models[model] = facts
    probe = _probe_debate(session)
    fingerprint = _digest(
        {"format": DEBATE_FORMAT, "models": models, "requests": _walk(session.panel, probe)}
    )
    config = session.config
    referees = ", ".join(f"{a.name} ({a.model})" for a in session.panel.agents)
    description = f"{config.task}, {config.strategy} x{config.rounds}: {referees}"
    return DebateKeys(fingerprint, description, session.panel)


def _walk(panel: Panel, debate: Debate) -> list[dict[str, Any]]:
    return [_request(turn, request) for turn, request in walk_requests(panel, debate)]


def _request(turn: Turn, request: GenerationRequest) -> dict[str, Any]:
    """A request as its key sees it: greedy decoding's seed and top-p left out."""
    said = asdict(request)
    said["turn"] = [turn.round, turn.agent, turn.kind, turn.scoring]
    if request.temperature == 0:
        del said["seed"], said["top_p"]
    return said


def _probe_debate(session: Session) -> Debate:
    """A debate of placeholder texts: its requests show the panel's prompts whatever the data."""
    if session.config.task == "direct":
        return Debate("probe", DirectItem("probe", "<context>", "<response>", "<knowledge>"))
    return Debate("probe", PairwiseItem("probe", "<question>", "<answer A>", "<answer B>"))


def _model_facts(session: Session, model: str, store: JudgmentStore) -> dict[str, Any] | None:
    """What decides ``model``'s completions besides the requests; None: nothing to fingerprint."""
    # The engine that decodes it, by the same name whether the run or a sweep loaded it.
    engines = session.engines
    engine = engines.backend_name(model) if isinstance(engines, Engines) else session.served_by()[model][0]
    spec, folder = session.engines.registry_entry(model)
    if spec is None:  # a backend handed in: the registry's entry of its name, if it has one
        try:
            registry = ModelRegistry(session.config.models_dir)
            spec = registry.spec(model)
            folder = registry.folder(model) if spec.path is not None else None
        except ConfigError:
            return None
    weights = store.folder_digest(folder) if folder is not None and folder.is_dir() else None
    server = spec.server
    if weights is None and server is None:
        return None
    engine_args = {**spec.engine_args, **session.config.vllm.engine_args.get(model, {})}
    return {
        "engine": engine,
        "weights": weights,
        "server": None if server is None else [server.base_url, server.model or model],
        "dtype": spec.dtype,
        "max_model_len": spec.max_model_len,
        "chat_template": spec.chat_template,  # the registry reads a chat_template_file into it
        "template_system_prompt": spec.template_system_prompt,
        "engine_args": engine_args if engine == "vllm" else {},
    }


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
