"""docs/config.md and docs/import_config.md, generated from the config models so they cannot
drift from the code.

Every key of ``RunConfig`` with its type, default and the description given in its ``Field``;
nested settings get a section each; the same for ``ImportConfig`` and its two other kinds
(``chateval import``) on a page of their own. ``python scripts/write_config_docs.py`` rewrites
the pages and a test checks that the committed pages are what this module generates.
"""

import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from chateval.config.chateval_imports import ChatEval2023ImportConfig
from chateval.config.data import DataConfig
from chateval.config.direct_imports import DirectImportConfig
from chateval.config.imports import ImportConfig, RefereeSpec
from chateval.config.run import RunConfig

HEADER = """# Config reference

Every key a run config may hold (`chateval run CONFIG`, `--set key=value`), generated from the
config models in `src/chateval/config/` by `python scripts/write_config_docs.py`. Unknown keys
are errors; most name the closest known key and every key their section allows. A config may start
with `extends: other.yaml` and override only what differs (mappings merge, lists are replaced,
and so is a `data.path` mapping of systems: a config that gives its own keeps none of its
base's; a labels file it inherits with its own data is named in a warning). Paths are relative
to the config file.
"""


def _type_name(annotation: Any) -> str:
    """A short, readable name of a field's type."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in args)
    if origin in (list, tuple, dict):
        inner = ", ".join(_type_name(a) for a in args if a is not Ellipsis)
        return f"{origin.__name__}[{inner}]"
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "mapping"
    return getattr(annotation, "__name__", str(annotation))


def _field_type(field: FieldInfo) -> str:
    """The field's type, or the names it accepts where a registry gives them (``choices``)."""
    extra = field.json_schema_extra
    choices = extra.get("choices") if isinstance(extra, dict) else None
    if isinstance(choices, list):
        return " \\| ".join(f"`{c}`" for c in choices)
    return _type_name(field.annotation)


def _default(field: FieldInfo) -> str:
    if field.default is PydanticUndefined and field.default_factory is None:
        return "required"
    # pydantic types default_factory as maybe taking the validated data; ours take nothing.
    value = field.default_factory() if field.default_factory is not None else field.default  # type: ignore[call-arg]
    if isinstance(value, BaseModel):
        return "(section below)"
    if value is None:
        return "`null`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _section(
    title: str, model: type[BaseModel], prefix: str, shared: tuple[type[BaseModel], ...] = ()
) -> list[str]:
    """The section of ``model``'s keys, then one per nested model (``shared``: documented
    elsewhere, not repeated)."""
    lines = [f"## {title}", "", (model.__doc__ or "").strip().splitlines()[0], ""]
    lines += ["| key | type | default | description |", "| --- | --- | --- | --- |"]
    nested: dict[str, type[BaseModel]] = {}
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        lines.append(f"| `{key}` | {_field_type(field)} | {_default(field)} | {field.description or ''} |")
        for sub, many in _models_in(field.annotation):
            if sub not in shared:
                nested[f"{key}[]" if many else key] = sub
    out = lines + [""]
    for key, sub in nested.items():
        out += _section(f"`{key}`", sub, f"{key}.", shared)
    return out


def _models_in(annotation: Any, many: bool = False) -> list[tuple[type[BaseModel], bool]]:
    """The config models a field holds, and whether as a list of them."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, many)]
    is_list = typing.get_origin(annotation) is list
    return [found for arg in typing.get_args(annotation) for found in _models_in(arg, many or is_list)]


IMPORT_HEADER = """# Import config reference

Every key of an import config (`chateval import CONFIG`: another tool's pairwise verdicts as a
run folder; [Judgments from elsewhere](imports.md)), validated like a run config: unknown keys
are errors naming the file and key, `extends` works alike, and paths are relative to the config
file. Field names (`judgments.prompt`, `labels.label`, ...) may be dotted paths into nested
records (`judge.0`). Its `data` section is a run config's ([data](config.md#data)): a responses format,
or a pairwise one whose items are the comparisons judged.
Two kinds of import config have keys of their own (below): direct scores (`task: direct`, as
MT-Bench's single-answer grading) and ChatEval's own 2023 outputs (`format: chateval_2023`).
"""


def config_reference() -> str:
    """docs/config.md: every key of a run config."""
    return "\n".join([HEADER, *_section("Top level", RunConfig, "")]).rstrip() + "\n"


def import_config_reference() -> str:
    """docs/import_config.md: every key of an import config, of each kind."""
    imported = _section("Import config: top level", ImportConfig, "", shared=(DataConfig,))
    shared = (DataConfig, RefereeSpec)  # documented above
    direct = _section("Direct scores import (task direct): top level", DirectImportConfig, "", shared)
    chateval = _section(
        "ChatEval 2023 outputs import (format chateval_2023): top level", ChatEval2023ImportConfig, "", shared
    )
    return "\n".join([IMPORT_HEADER, *imported, *direct, *chateval]).rstrip() + "\n"


PAGES = {"config.md": config_reference, "import_config.md": import_config_reference}


def write(docs: Path) -> list[Path]:
    """Write every page of ``PAGES`` into the folder ``docs``; the paths written."""
    written = []
    for name, generate in PAGES.items():
        (docs / name).write_text(generate(), encoding="utf-8")
        written.append(docs / name)
    return written
