"""--help reads as prose: a docstring's wrapped lines join into one paragraph instead of breaking
mid-sentence where the source wrapped them."""

from typer.testing import CliRunner

from chateval.cli import app


def test_help_joins_wrapped_docstring_lines() -> None:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    said = result.output
    # preview's docstring wraps after "with"; sweep's after "goes"; bench's after "engines".
    assert "one item's debate, with placeholders where earlier utterances go" in said
    assert "(the engines' output goes to OUTDIR/engine.log unless --verbose)" in said
    assert "limit, same engines (the engines' output goes to NAME.engine.log" in said
    run = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "250"}).output
    assert "the engines' own output goes to engine.log in the run folder" in run


def test_flags_show_no_value_type() -> None:
    """typer 0.29 labels every flag ``<bool>`` as if it took a value; chateval's --help does not."""
    for command in ([], ["run"], ["models", "prepare"]):
        said = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "250"}).output
        assert "--help" in said
        assert "<bool>" not in said, command
    run = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "250"}).output
    assert "<path>" in run  # options that take a value keep their type
