"""The typer application behind the ``stoicheia`` console command.

Every command lives in its own module as a plain function and is added here; the corpus
and benchmark steps are sub-applications (``stoicheia corpus ...``, ``stoicheia bench ...``)
that ``python -m stoicheia_spacy.corpus`` / ``python -m stoicheia_spacy.bench`` also run.
"""

from __future__ import annotations

from collections.abc import Sequence

import typer

from .accentuate import accentuate_command
from .bench import bench_app
from .command import Command
from .corpus import corpus_app
from .date import date_command
from .demo import demo_command
from .package import package_command
from .parse import parse_command
from .passthrough import PASS_THROUGH
from .pretrain import HELP as PRETRAIN_HELP
from .pretrain import pretrain_command
from .restore import restore_command
from .scan import scan_command

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
app.command("parse", cls=Command)(parse_command)
app.command("restore", cls=Command)(restore_command)
app.command("scan", cls=Command)(scan_command)
app.command("pretrain", cls=Command, help=PRETRAIN_HELP, context_settings=PASS_THROUGH)(pretrain_command)
app.add_typer(corpus_app, name="corpus")
app.add_typer(bench_app, name="bench")


def run(typer_app: typer.Typer, argv: Sequence[str] | None = None, *, prog_name: str | None = None) -> int:
    """Run ``typer_app`` on ``argv`` (default: ``sys.argv[1:]``) and return its exit status."""
    try:
        typer_app(args=None if argv is None else list(argv), prog_name=prog_name)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else 0 if code is None else 1
    return 0


# Commands that add themselves to ``app`` when imported (they import it from here).
from . import annotate as _annotate  # noqa: E402, F401
from . import serve as _serve  # noqa: E402, F401
from . import which_model as _which_model  # noqa: E402, F401
