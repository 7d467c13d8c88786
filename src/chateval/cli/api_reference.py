"""docs/python_api.md, generated from the package's public names (``chateval.__all__``) so that it
cannot drift from the code.

Each name with its signature (annotations written as in the source: short class names, ``X |
None``) and its docstring, grouped as functions, classes, errors and constants; a class also
with its own public methods and properties. A public item without a docstring stops the page
(give it one). ``python scripts/write_reference_docs.py`` rewrites it; a test checks that the
committed page is what this module generates.
"""

import inspect
import types
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

import chateval.version

HEADER = """# Python API reference

The names `import chateval` gives, with their signatures and docstrings. Generated from
`chateval.__all__` by `python scripts/write_reference_docs.py`: do not edit by hand. The keys
of a `RunConfig` are in the [config reference](config.md); the command line is in the
[command-line reference](cli.md).
"""

WIDTH = 88  # a longer signature is written one parameter a line


def annotation_text(annotation: Any) -> str:
    """A type as the source writes it: ``Path | None``, ``list[VerdictRecord]``,
    ``Literal['pairwise', 'direct']``; an ``Annotated`` type's constraints left out."""
    if isinstance(annotation, str):
        return annotation
    if annotation is None or annotation is type(None):
        return "None"
    if annotation is Ellipsis:
        return "..."
    if isinstance(annotation, list):  # the parameters of a Callable
        return f"[{', '.join(annotation_text(a) for a in annotation)}]"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return annotation_text(args[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(annotation_text(a) for a in args)
    if origin is typing.Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    name = getattr(origin or annotation, "__name__", None) or str(annotation).removeprefix("typing.")
    return f"{name}[{', '.join(annotation_text(a) for a in args)}]" if args else name


def _default_text(value: Any) -> str:
    """A default as the source writes it; a settings model left at its defaults as ``Name()``."""
    if isinstance(value, BaseModel) and not value.model_fields_set:
        return f"{type(value).__name__}()"
    return repr(value)


def signature_text(name: str, obj: Callable[..., Any], skip_self: bool = False) -> str:
    """``name(parameters) -> return``, on one line or, when long, one parameter a line."""
    signature = inspect.signature(obj)
    fields = obj.model_fields if isinstance(obj, type) and issubclass(obj, BaseModel) else {}
    parts: list[str] = []
    before = None  # the previous parameter's kind: where "/" and "*" go
    for param in list(signature.parameters.values())[1 if skip_self else 0 :]:
        if before is param.POSITIONAL_ONLY and param.kind is not param.POSITIONAL_ONLY:
            parts.append("/")
        if param.kind is param.KEYWORD_ONLY and before not in (param.KEYWORD_ONLY, param.VAR_POSITIONAL):
            parts.append("*")
        before = param.kind
        stars = "*" if param.kind is param.VAR_POSITIONAL else "**" if param.kind is param.VAR_KEYWORD else ""
        text = stars + param.name
        if param.annotation is not param.empty:
            text += f": {annotation_text(param.annotation)}"
        if param.default is not param.empty:
            # A model's field made by a factory shows as <factory>: say what the factory makes.
            field = fields.get(param.name)
            default = field.get_default(call_default_factory=True) if field else param.default
            text += f" = {_default_text(default)}"
        parts.append(text)
    if before is inspect.Parameter.POSITIONAL_ONLY:
        parts.append("/")
    returns = signature.return_annotation
    tail = "" if returns is signature.empty or isinstance(obj, type) else f" -> {annotation_text(returns)}"
    one_line = f"{name}({', '.join(parts)}){tail}"
    if len(one_line) <= WIDTH:
        return one_line
    return "\n".join([f"{name}(", *(f"    {part}," for part in parts), f"){tail}"])


def docstring_markdown(obj: Any, where: str) -> str:
    """``obj``'s docstring as Markdown: an RST literal block (a line ending ``::``, then an
    indented block) becomes a fenced Python block. A missing docstring is an error."""
    doc = inspect.getdoc(obj)
    if not doc:
        raise ValueError(f"{where} has no docstring: the API reference needs one")
    out: list[str] = []
    literal = False  # inside a literal block
    for line in doc.splitlines():
        if literal and line.strip() and not line.startswith("    "):
            out, literal = [*_fence_closed(out), ""], False
        if not literal:
            out += [line[:-1], "", "```python"] if line.endswith("::") else [line]
            literal = line.endswith("::")
        elif line.strip() or out[-1] != "```python":  # no blank line at the block's top
            out.append(line[4:])
    return "\n".join(_fence_closed(out) if literal else out)


def _fence_closed(lines: list[str]) -> list[str]:
    """A literal block's lines with its closing fence, the blank lines before it dropped."""
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return [*lines, "```"]


def _code(text: str) -> list[str]:
    return ["```python", text, "```", ""]


def _members(cls: type) -> list[str]:
    """The class's own public methods and properties, in source order."""
    lines: list[str] = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        where = f"{cls.__name__}.{name}"
        if isinstance(member, property) and member.fget is not None:
            returns = inspect.signature(member.fget).return_annotation
            code = where if returns is inspect.Signature.empty else f"{where}: {annotation_text(returns)}"
            lines += [f"### {where}", "", *_code(code), docstring_markdown(member, where), ""]
        elif isinstance(member, (staticmethod, classmethod)) or inspect.isfunction(member):
            function = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
            skip = not isinstance(member, staticmethod)  # self or cls
            code = signature_text(where, function, skip_self=skip)
            lines += [f"### {where}", "", *_code(code), docstring_markdown(function, where), ""]
    return lines


def _entry(name: str, obj: Any) -> list[str]:
    """One public name's section."""
    where = f"chateval.{name}"
    if isinstance(obj, type) and issubclass(obj, BaseException):
        bases = ", ".join(base.__name__ for base in obj.__bases__)
        return [f"## {where}", "", *_code(f"class {where}({bases})"), docstring_markdown(obj, where), ""]
    if isinstance(obj, type):
        head = [f"## {where}", "", *_code("class " + signature_text(where, obj))]
        return [*head, docstring_markdown(obj, where), "", *_members(obj)]
    if callable(obj):
        return [f"## {where}", "", *_code(signature_text(where, obj)), docstring_markdown(obj, where), ""]
    # A value (the version string): no docstring of its own; its module's says what it is.
    if name != "__version__":
        raise ValueError(f"{where}: the API reference does not know how to describe a {type(obj).__name__}")
    shown = where.replace("_", "\\_")  # not Markdown's bold
    return [f"## {shown}", "", *_code(f"{where}: str"), docstring_markdown(chateval.version, where), ""]


def _place(obj: Any) -> tuple[int, int]:
    """Functions first, then classes, errors (a base before the errors that extend it) and the
    version: the order a reader needs them."""
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return 2, len(obj.__mro__)
    if isinstance(obj, type):
        return 1, 0
    return (0 if callable(obj) else 3), 0


def api_reference(package: types.ModuleType) -> str:
    """The whole of docs/python_api.md. ``package``: the chateval package, given by the caller
    (the script, a test): no module of a stage imports the package root (tests/test_public_api.py)."""
    names = sorted(package.__all__, key=lambda name: _place(getattr(package, name)))
    intro = docstring_markdown(package, package.__name__)
    entries = [line for name in names for line in _entry(name, getattr(package, name))]
    return "\n".join([HEADER, intro, "", *entries]).rstrip() + "\n"
