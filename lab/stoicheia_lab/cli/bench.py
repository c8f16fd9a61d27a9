"""``stoicheia bench NAME [OPTIONS]``: the benchmarks of :mod:`stoicheia_lab.bench`.

One sub-command per benchmark module (``codec``, ``backbone``, ``quality``, ``restore``,
``parse``, ...); its options are the module's own (``stoicheia bench NAME --help``).
``python -m stoicheia_lab.bench NAME`` is the same application.
"""

from __future__ import annotations

import ast
import importlib.util
import pkgutil

import typer

from stoicheia_spacy.cli.passthrough import PASS_THROUGH, pass_through

bench_app = typer.Typer(name="bench", no_args_is_help=True, add_completion=False,
                        help="Benchmarks: each prints ratios against a baseline measured in the same run.")

#: Summary and example arguments of the known benchmarks (others: their docstring's first line).
KNOWN = {
    "accent": ("Lexicon-lattice decoding letters/s and t(4N)/t(N), against the per-letter decode.",
               "--letters 4000"),
    "backbone": ("Backbone letters/s and achieved FLOP/s against this machine's GEMM rate.",
                 "--sizes 1024,4096 --threads 2"),
    "cliload": ("Wall, CPU, spacy.load time and components loaded of `stoicheia restore` on one gap, "
                "against a baseline checkout in the same run.",
                "--baseline ../base --rounds 3 --out assets/metrics/cli_restore_load.json"),
    "codec": ("Codec MB/s (encode, decode, canonicalize) against plain NFD.", "--mb 2"),
    "components": ("CPU seconds per component and words/s of the default pipeline, against a baseline "
                   "checkout in the same run; the encoder against same-shape matmuls.",
                   "--baseline ../old-checkout --out components.json"),
    "heapclimb": ("RSS per annotated piece of the default pipeline, with and without glibc malloc_trim.",
                  "--pieces 12 --out memory_climb.json"),
    "length": ("CPU seconds per component and peak RSS of the default pipeline against document length "
               "(an unpunctuated line, an unspaced word, one gap), with the log-log slope of time.",
               "--lengths 1000,4000,16000 --out length.json --plot length.png"),
    "parse": ("Words/s of tagging + lemmatizing + parsing against a spaCy CNN pipeline; scores with --data.",
              "--n 50 --data corpus/ud_perseus_test_agdt.spacy"),
    "pipeline": ("Words/s of the full default pipeline against the encoder alone, both against the GEMM roofline.",
                 "--n 200 --out bench_pipeline.json"),
    "released_shape": ("Backbone letters/s at the released shape (d 1024, 16 heads, window 256) per precision "
                       "(float32, float32-fused, int8, bfloat16): median paired ratio to float32 in the same rounds.",
                       "--depths 8,32 --lengths 2048,8192 --rounds 3 --out assets/metrics/speed/released_shape_fused.json"),
    "quality": ("Masked bits-per-character of a backbone against a random-init control and an n-gram LM.",
                "--source embedded:grc_stoicheia_doc_clean --dev-letters 5000"),
    "roundtrip": ("Codec round trip on the UD test sets, failures listed by class.", "--data /path/to/mirror"),
    "restore": ("Restoration CPU-s per gap at beam 20 on widths 1-10 and projected CPU-hours for 3,000 gaps: "
                "one forward per hypothesis, batched, fast.",
                "--quick"),
}


def available() -> list[str]:
    """Names of the benchmark modules that ship with the package."""
    import stoicheia_lab.bench as bench_pkg

    return sorted(m.name for m in pkgutil.iter_modules(bench_pkg.__path__) if not m.name.startswith("_"))


def summary(name: str) -> str:
    """The first line of a benchmark module's docstring, read without importing it."""
    spec = importlib.util.find_spec(f"stoicheia_lab.bench.{name}")
    if spec is None or spec.origin is None:
        return f"The {name} benchmark."
    with open(spec.origin, encoding="utf-8") as handle:
        doc = ast.get_docstring(ast.parse(handle.read())) or f"The {name} benchmark."
    return doc.strip().splitlines()[0]


for _name in available():
    _summary, _example = KNOWN[_name] if _name in KNOWN else (summary(_name), "")
    _help = f"{_summary}\n\nExample: stoicheia bench {_name.replace('_', '-')} {_example}".rstrip()
    bench_app.command(_name.replace("_", "-"), help=_help, context_settings=PASS_THROUGH)(
        pass_through(f"stoicheia_lab.bench.{_name}", _help))
