"""The console: one bar counting debates, warnings once with a count, the engines' output in
engine.log (appended on resume) with its last lines shown when a run fails."""

import io
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chateval.backends.scripted import ScriptedBackend, StreamingScriptedBackend
from chateval.bench.modes import run_bench
from chateval.config.run import RunConfig
from chateval.core.backend import GenerationRequest
from chateval.core.command_console import command_console
from chateval.core.console import Console
from chateval.core.console_handler import ConsoleHandler, once
from chateval.core.progress import Progress
from chateval.errors import BackendError
from chateval.record.files import RunFolder
from chateval.reporting.html import write_html_report
from chateval.run.runner import run
from tests.support.helpers import asks_for_scores, prompt_dependent, tiny_config
from tests.support.scripted import M1_AND_M2_AGENTS, DiesAtCall, LoadLog

MODEL = "smollm2-135m"


def agreeing(request: GenerationRequest) -> str:
    return "Assistant 1: 7\nAssistant 2: 2\nEvidence: agree" if asks_for_scores(request) else "Fine."


@pytest.mark.parametrize(
    ("backend_class", "early_stop"),
    [(ScriptedBackend, False), (StreamingScriptedBackend, False), (ScriptedBackend, True)],
    ids=["barrier", "streaming", "early_stop"],
)
def test_the_bar_counts_debates_and_ends_at_their_total(
    backend_class: type[ScriptedBackend], early_stop: bool, tmp_path: Path
) -> None:
    stream = io.StringIO()
    bar = Progress(Console(stream, terminal=False))
    responder = agreeing if early_stop else prompt_dependent
    config = tiny_config(early_stop=early_stop, rounds=3 if early_stop else 2)
    result = run(config, tmp_path, backends={MODEL: backend_class(MODEL, responder)}, progress=bar)
    info = result.run_info
    assert info["debates"] == 4  # 2 items in both answer orders
    assert (bar.total, bar.done) == (info["debates"], info["debates"])
    assert bar.requests == info["requests"] and bar.tokens == info["generated_tokens"]
    if early_stop:
        assert info["early_stopped_debates"] == 4
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and "\x1b" not in stream.getvalue()  # plain lines
    assert re.match(r"debates 0/4, steps 0/\d+ \(0%\), 0 requests", lines[0]), lines[0]
    # Every step counts, those an early-stopped debate skips included: the bar ends at 100%.
    assert re.match(rf"debates 4/4, steps (\d+)/\1 \(100%\), {info['requests']} requests", lines[-1])


def test_a_resumed_run_starts_its_bar_at_the_journaled_debates(tmp_path: Path) -> None:
    run(tiny_config(), tmp_path, backends={MODEL: ScriptedBackend(MODEL, prompt_dependent)})
    (tmp_path / "run.json").unlink()  # as if killed after its last step was journaled
    bar = Progress()
    run(tiny_config(), tmp_path, backends={MODEL: ScriptedBackend(MODEL, prompt_dependent)}, progress=bar)
    assert (bar.total, bar.done, bar.requests) == (4, 4, 0)


def test_a_resumed_run_says_what_it_replayed_and_its_bar_starts_past_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(BackendError):  # the third step's call fails: two steps are journaled
        run(tiny_config(), tmp_path, backends={MODEL: DiesAtCall(MODEL, prompt_dependent, 3)})
    lines: list[str] = []

    class Recording(Progress):
        def start(self, *args: Any, **kwargs: Any) -> None:
            super().start(*args, **kwargs)
            lines.append(self.text())

    with caplog.at_level(logging.INFO, logger="chateval"):
        run(
            tiny_config(),
            tmp_path,
            backends={MODEL: ScriptedBackend(MODEL, prompt_dependent)},
            progress=Recording(),
        )
    # 4 debates, each 2 referees' first turns: 8 requests; the bar starts 2 of 6 steps in.
    assert "replayed from the journal: 8 requests in 4 debates, not sent again" in caplog.messages
    assert lines[0].startswith("debates 0/4, steps 8/24 (33%), 0 requests")


def test_debates_from_the_judgment_store_are_said_and_start_the_bar_finished(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.run.test_judgment_store_runs import store_models_dir

    config = tiny_config(models_dir=str(store_models_dir(tmp_path / "models")))
    store = tmp_path / "store"
    run(config, tmp_path / "first", backends={MODEL: ScriptedBackend(MODEL, prompt_dependent)}, cache=store)
    bar = Progress()
    with caplog.at_level(logging.INFO, logger="chateval"):
        run(
            config,
            tmp_path / "again",
            backends={MODEL: ScriptedBackend(MODEL, prompt_dependent)},
            cache=store,
            progress=bar,
        )
    assert "judgment store: 4 debates judged before taken from it, not judged again" in caplog.messages
    assert bar.text().startswith("debates 4/4, steps 24/24 (100%), 0 requests")


def test_a_terminal_gets_one_bar_redrawn_with_lines_above_it() -> None:
    stream = io.StringIO()
    console = Console(stream, terminal=True)
    bar = Progress(console)
    bar.start(4)
    bar.update(1, 1)
    console.line("loading model m")
    bar.set_model("m")
    bar.update(3, 3)
    bar.close()
    text = stream.getvalue()
    assert "\rloading model m" in text.replace("\r\x1b[K", "\r")
    last = text.rsplit("\r", 1)[-1]
    assert last.startswith("debates 4/4 [####################]") and last.endswith("[m]\x1b[K\n")


def test_a_warning_marked_once_is_printed_once_then_counted() -> None:
    stream = io.StringIO()
    handler = ConsoleHandler(Console(stream, terminal=False))
    logger = logging.getLogger("chateval.test_console")
    logger.addHandler(handler)
    try:
        for n in range(3):
            logger.warning("item %d cut", n, extra=once("cut", "items cut"))
        logger.warning("something else")
    finally:
        logger.removeHandler(handler)
    assert stream.getvalue().splitlines() == ["warning: item 0 cut", "warning: something else"]
    assert handler.recap() == ["warning: 3 items cut in all (the first one is shown above)"]


def test_engine_output_goes_to_engine_log_appended_on_resume_and_a_failure_shows_its_tail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = 0

    def engine(request: GenerationRequest) -> str:
        """Writes to the file descriptors, as an engine's C++ code does, and dies once."""
        nonlocal calls
        calls += 1
        os.write(2, f"engine: request {calls}\n".encode())
        if calls == 6:
            raise BackendError("the engine died")
        return prompt_dependent(request)

    out = tmp_path / "run"

    def cli_run() -> None:
        with command_console() as console:
            # A child process inherits the redirected descriptors.
            subprocess.run([sys.executable, "-c", "print('a child process')"], check=True)
            run(
                tiny_config(),
                out,
                backends={MODEL: ScriptedBackend(MODEL, engine)},
                progress=console.progress(),
                on_outdir=lambda folder, resuming: console.attach(RunFolder(folder).engine_log, resuming),
            )

    with pytest.raises(BackendError, match="the engine died"):
        cli_run()
    shown = capsys.readouterr().err
    assert f"last lines of {RunFolder(out).engine_log}:" in shown and "  engine: request 6" in shown
    cli_run()
    shown = capsys.readouterr().err
    assert "engine:" not in shown and "a child process" not in shown and "last lines" not in shown
    assert json.loads((out / "run.json").read_text())["resumed"] is True
    log = RunFolder(out).engine_log.read_text()
    assert log.count("a child process") == 2
    assert all(f"engine: request {n}\n" in log for n in range(1, calls + 1))


def test_verbose_leaves_the_engines_on_the_console(tmp_path: Path) -> None:
    with command_console(verbose=True, log_path=RunFolder(tmp_path).engine_log) as console:
        assert console.engine_log is None
    assert not RunFolder(tmp_path).engine_log.exists()


def test_bench_shows_one_bar_per_mode_each_ending_at_its_total() -> None:
    bars: dict[str, Progress] = {}

    def bar(unit: str) -> Progress:
        bars[unit] = Progress()
        return bars[unit]

    run_bench(tiny_config(), backends={MODEL: ScriptedBackend(MODEL, prompt_dependent)}, progress=bar)
    assert list(bars) == ["scheduled: debates", "limit: requests", "sequential: debates"]
    assert all(b.done == b.total > 0 and b.closed for b in bars.values())
    assert bars["limit: requests"].total == bars["scheduled: debates"].requests


def test_the_html_report_counts_the_items_it_builds(scripted_reference: Path, tmp_path: Path) -> None:
    bar = Progress()
    write_html_report([scripted_reference], tmp_path, progress=bar)
    assert bar.total == bar.done == 12


def test_a_phased_bar_names_the_model_loaded_now(tmp_path: Path) -> None:
    stream = io.StringIO()
    console = Console(stream, terminal=True)
    bar = Progress(console)
    seen: list[str | None] = []

    class Watched(LoadLog):
        def __call__(self, config: RunConfig, model: str) -> ScriptedBackend:
            seen.append(bar.model)  # the model loaded before this one
            return super().__call__(config, model)

    config = tiny_config(agents=M1_AND_M2_AGENTS, strategy="simultaneous", placement={"mode": "phased"})
    run(config, tmp_path, backend_factory=Watched(), progress=bar)
    assert seen[:3] == [None, "m1", "m2"]
    assert f"[{bar.model}]\x1b[K\n" in stream.getvalue()


def test_a_long_batch_moves_the_bar_before_its_first_request_finishes(tmp_path: Path) -> None:
    """A barrier step on an engine that reports its running requests' tokens (vLLM) is stepped
    by the scheduler: the bar's tokens per second and ETA move with every engine step, not only
    when the whole batch is back."""
    from chateval.core.backend import LiveTokens
    from tests.support.scripted import LiveTokensBackend

    lines: list[str] = []

    class Recording(Progress):
        def add_requests(self, requests: int, tokens: int, running_tokens: int | None = None) -> None:
            super().add_requests(requests, tokens, running_tokens)
            lines.append(self.text())

    backend = LiveTokensBackend(MODEL, prompt_dependent, per_poll=1)
    assert isinstance(backend, LiveTokens)
    bar = Recording()
    result = run(tiny_config(scheduling="barrier"), tmp_path, backends={MODEL: backend}, progress=bar)
    assert result.run_info["scheduling"] == "barrier"
    assert result.run_info["batches"] == result.run_info["steps"]  # still one batch per step
    first_turns = 4 * 2  # 4 debates, 2 referees' first turns: one request finishes per poll
    # 4 debates x 6 steps; a step of 4 debates is 4 requests, each moving the bar by its share.
    assert lines[0].startswith("debates 0/4, steps 1/24 (4%), 1 requests, ")
    assert "- tok/s" not in lines[0]  # the other 7 requests' tokens so far count
    assert "ETA -" not in lines[0]  # the step's first request moved its share of the work
    # No debate has ended, and the bar has moved a third of the way (issue 69).
    assert lines[first_turns - 1].startswith(f"debates 0/4, steps 8/24 (33%), {first_turns} requests")
    assert bar.text().startswith("debates 4/4, steps 24/24 (100%)")
