"""The typer application behind the ``stoicheia`` console command.

Every command lives in its own module as a plain function and is added here. The corpus
and benchmark steps (``stoicheia corpus ...``, ``stoicheia bench ...``) are sub-applications of
the lab package ``stoicheia_lab``, registered through the ``stoicheia_spacy.commands`` entry
points; without the lab each says how to install it.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import entry_points

import typer

from .accentuate import accentuate_command
from .annotate import annotate_command
from .command import Command
from .date import date_command
from .demo import demo_command
from .package import package_command
from .parallels import parallels_command
from .parse import parse_command
from .passthrough import PASS_THROUGH
from .pretrain import HELP as PRETRAIN_HELP
from .pretrain import pretrain_command
from .restore import restore_command
from .scan import scan_command
from .serve import serve_command
from .which_model import which_model_command

app = typer.Typer(
    name="stoicheia",
    help="Stoicheia for spaCy: restore, accentuate, parse and scan Greek; package pipelines; "
         "build the corpus, pretrain, benchmark.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
)
app.command("accentuate", cls=Command)(accentuate_command)
app.command("date", cls=Command)(date_command)
app.command("demo", cls=Command)(demo_command)
app.command("package", cls=Command)(package_command)
app.command("parallels", cls=Command)(parallels_command)
app.command("parse", cls=Command)(parse_command)
app.command("restore", cls=Command)(restore_command)
app.command("scan", cls=Command)(scan_command)
app.command("pretrain", cls=Command, help=PRETRAIN_HELP, context_settings=PASS_THROUGH)(pretrain_command)

#: Entry-point group of the sub-applications other packages add (the lab: ``bench``, ``corpus``).
COMMANDS_GROUP = "stoicheia_spacy.commands"
#: The lab's sub-applications, and how to get them.
LAB_COMMANDS = {"bench": "Benchmarks: each prints ratios against a baseline measured in the same run.",
                "corpus": "Build the pretraining corpus: open sources, tiers, ten decontaminated folds."}
LAB_INSTALL = "pip install -e lab (from a checkout of stoicheia-spacy; `make install` does it)"


def _lab_missing(target: typer.Typer, name: str) -> None:
    def command(ctx: typer.Context) -> None:
        typer.echo(f"error: `stoicheia {name}` is part of the lab (stoicheia_lab), which is not installed: "
                   f"{LAB_INSTALL}", err=True)
        raise typer.Exit(1)

    target.command(name, help=f"{LAB_COMMANDS[name]} Needs the lab: {LAB_INSTALL}.",
                   context_settings=PASS_THROUGH)(command)


def add_commands(target: typer.Typer) -> None:
    """Add to ``target`` the sub-applications registered under :data:`COMMANDS_GROUP`; a lab
    command that is not registered becomes one that says how to install the lab."""
    found = {ep.name: ep for ep in entry_points(group=COMMANDS_GROUP)}
    for name in sorted(set(found) | set(LAB_COMMANDS)):
        if name in found:
            target.add_typer(found[name].load(), name=name)
        else:
            _lab_missing(target, name)


add_commands(app)
app.command("annotate", cls=Command)(annotate_command)
app.command("serve", cls=Command)(serve_command)
app.command("which-model", cls=Command)(which_model_command)


def run(typer_app: typer.Typer, argv: Sequence[str] | None = None, *, prog_name: str | None = None) -> int:
    """Run ``typer_app`` on ``argv`` (default: ``sys.argv[1:]``) and return its exit status."""
    try:
        typer_app(args=None if argv is None else list(argv), prog_name=prog_name)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else 0 if code is None else 1
    return 0

