"""The command class of every ``stoicheia`` command (help with real placeholders)."""

from __future__ import annotations

from typer.core import TyperArgument, TyperCommand, TyperOption


class Command(TyperCommand):
    """A command whose help shows real placeholders: a positional argument by its name
    alone (``TEXT_OR_FILE``, not ``{text} <str>``), a flag with none (not ``<bool>``), an
    option by its choices or its name (``--out OUT``)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        for param in self.params:
            if isinstance(param, TyperArgument):
                placeholder = param.metavar or (param.name or "ARG").upper()
                param.metavar = placeholder
                param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
                param._usage_display_name = lambda p=placeholder: p  # type: ignore[method-assign, misc]
            elif isinstance(param, TyperOption) and param.metavar is None:
                desc = param.type_descriptor
                choices = [getattr(c, "value", c) for c in desc.choices or ()] if desc.is_choice else []
                param.metavar = ("" if param.is_flag else "|".join(map(str, choices)) if choices
                                 else max(param.opts, key=len).lstrip("-").replace("-", "_").upper())
