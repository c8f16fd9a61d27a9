"""The embedded default: ``stoicheia package embedded: --name doc_clean`` builds an installable
``grc_stoicheia_doc_clean`` that loads offline by name, processes a passage and dates it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from stoicheia_spacy import __version__
from stoicheia_spacy import alphabet as A
from stoicheia_spacy.assets import default_model_dir
from stoicheia_spacy.backbone import load_backbone, planes_to_tensors
from stoicheia_spacy.cli import app
from stoicheia_spacy.codec import encode_planes

REPO = Path(__file__).resolve().parents[2]
PASSAGE = "ἔδοξε τῇ βουλῇ καὶ τῷ δήμῳ· Κεκροπὶς ἐπρυτάνευε, Γραμματεὺς ἐγραμμάτευε."


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("packages")
    result = CliRunner().invoke(app, ["package", "embedded:", "--name", "doc_clean", "--output", str(out)])
    assert result.exit_code == 0, result.output
    path = out / f"grc_stoicheia_doc_clean-{__version__}" / "dist" / f"grc_stoicheia_doc_clean-{__version__}.tar.gz"
    assert path.is_file()
    return path


def test_default_package_installs_and_loads_offline_by_name(sdist: Path, tmp_path: Path, lexicon_installed: str) -> None:
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(sdist)], check=True)
    weights = next(target.rglob("stoicheia_encoder/model.safetensors"))
    assert weights.stat().st_size < 60 * 2**20  # bf16, as shipped
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(REPO), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    code = (
        "import json, spacy; nlp = spacy.load('grc_stoicheia_doc_clean'); "
        f"doc = nlp({PASSAGE!r}); "
        "print(json.dumps([doc.text, len(doc), doc._.stoicheia.n_letters, [doc._.stoicheia.hidden is None, sorted(list(v.shape) for v in doc._.stoicheia.states.values())], "
        "nlp.pipe_names, doc._.accent_text, doc._.date.to_dict()]))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "lexicon" not in out.stderr.lower() and "Warning" not in out.stderr  # the best configuration, quietly
    meta = json.loads(next(target.rglob("grc_stoicheia_doc_clean*/meta.json")).read_text(encoding="utf-8"))
    for terms in ("MIT", "CC BY-NC 4.0", "CC BY 4.0", "CC BY-SA 4.0", "GPL-3.0"):
        assert terms in meta["license"], terms
    assert any(r.startswith("stoicheia-lexicon-grc==") for r in meta["requirements"])
    config = next(target.rglob("grc_stoicheia_doc_clean*/config.cfg")).read_text(encoding="utf-8")
    assert "/work/" not in config and str(REPO) not in config  # no machine path in the package
    text, n_tokens, n_letters, shape, pipes, accented, date = json.loads(out.stdout.strip().splitlines()[-1])
    assert text == PASSAGE and n_tokens >= 12
    assert pipes[0] == "stoicheia_encoder"
    assert {"stoicheia_restorer", "stoicheia_accentuator", "stoicheia_scanner", "stoicheia_dater"} <= set(pipes)
    assert "stoicheia_attributor" not in pipes  # ships beside the model, not in its default pipeline
    assert date["low"] < date["weighted_median"] < date["high"] and date["level"] == 0.9  # an Attic decree, dated
    assert accented.startswith("ἔδοξε")
    assert n_letters == len(encode_planes(PASSAGE))
    # states = "used": the scanner's mix and the dater's two layers per letter, 3 poolers' token vectors
    assert shape == [True, sorted([[n_letters, 384], [2, n_letters, 384]] + [[n_tokens, 384]] * 3)]


def test_default_backbone_restores_hidden_letters_of_held_out_text() -> None:
    """Masked letters of held-out literary text: far above chance (1/24), as pretraining promises."""
    dev = [json.loads(line) for line in (default_model_dir() / "dev_sample.jsonl").open(encoding="utf-8")]
    planes = encode_planes(dev[1]["text"])[:1500]
    rng = np.random.default_rng(0)
    masked = np.flatnonzero(rng.random(len(planes)) < 0.15)
    hidden = planes.copy()
    hidden.letters[masked] = A.MASK_ID
    hidden.diacritics[masked] = A.DIA_UNKNOWN
    hidden.boundary[masked] = A.BND_UNKNOWN
    hidden.punctuation[masked] = A.PUNCT_UNKNOWN
    batch = planes_to_tensors([hidden])
    model = load_backbone(default_model_dir())
    with torch.inference_mode():
        logits = model(batch["input_ids"], batch["boundary"], batch["dia"], batch["punct"], seg_id=batch["seg_id"]).char
    guess = logits[0, masked, : A.N_ALPHA].argmax(-1).numpy()
    accuracy = float((guess == planes.letters[masked]).mean())
    print(f"top-1 on {len(masked)} masked held-out letters: {accuracy:.3f}")
    assert accuracy > 0.45
