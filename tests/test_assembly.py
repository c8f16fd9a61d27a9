"""Pipeline assembly outside the CLI: listeners linked through public API, one windowing
path for the pipe and ``encode_long``, and no registering imports or private spaCy calls."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

from stoicheia_spacy.assembly import DEFAULT_SOURCE, build_pipeline
from stoicheia_spacy.assets import default_model_dir
from stoicheia_spacy.backbone import planes_to_tensors
from stoicheia_spacy.backbone.windows import encode_long
from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.encoder.model import torch_backbone

PACKAGE = Path(__file__).resolve().parents[1] / "stoicheia_spacy"
ODYSSEY = ("ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ πλάγχθη, ἐπεὶ Τροίης ἱερὸν πτολίεθρον "
           "ἔπερσεν· πολλῶν δ’ ἀνθρώπων ἴδεν ἄστεα καὶ νόον ἔγνω, πολλὰ δ’ ὅ γ’ ἐν πόντῳ πάθεν ἄλγεα ὃν κατὰ θυμόν")


def test_listeners_link_through_spacys_public_pipeline_api(tmp_path: Path) -> None:
    """``add_pipe`` / ``remove_pipe`` / ``from_disk`` / ``spacy.load`` link listeners (no private call)."""
    import spacy

    heads = default_model_dir() / "scanner"
    assert (heads / "heads.safetensors").is_file(), "the default model ships scanner heads"
    nlp = build_pipeline(DEFAULT_SOURCE, components=False)
    encoder: Any = nlp.get_pipe("stoicheia_encoder")
    scanner: Any = nlp.add_pipe("stoicheia_scanner")  # its model starts with a StoicheiaListener to "*"
    assert encoder.listening_components == ["stoicheia_scanner"]
    listener = scanner.model.layers[0]
    assert encoder.listeners == [listener]
    scanner.from_disk(heads)  # weights load in place: the same listener stays linked
    assert encoder.listeners == [listener] and scanner.model.layers[0] is listener
    assert nlp(ODYSSEY)[0]._.macronized  # the heads receive the encoder's states
    nlp.to_disk(tmp_path / "nlp")
    nlp.remove_pipe("stoicheia_scanner")
    assert encoder.listening_components == []
    loaded = spacy.load(tmp_path / "nlp")
    assert loaded.get_pipe("stoicheia_encoder").listening_components == ["stoicheia_scanner"]  # type: ignore[attr-defined]


def test_pipe_and_encode_long_share_one_windowing_path(tiny_checkpoint: Path) -> None:
    """A Doc longer than ``max_length`` gives the same states through the packed pipe and
    through ``encode_long`` with the same long-document window."""
    max_length, overlap = 48, 12
    nlp = build_pipeline(str(tiny_checkpoint), components=False, max_length=max_length, overlap=overlap)
    doc = nlp(ODYSSEY)
    hidden = np.asarray(doc._.stoicheia.hidden)
    planes = encode_planes(ODYSSEY)
    assert len(planes) > 3 * max_length and hidden.shape[1] == len(planes)
    backbone = torch_backbone(nlp.get_pipe("stoicheia_encoder").model).eval()  # type: ignore[attr-defined]
    inputs = planes_to_tensors([planes])
    depth = backbone.config.depth
    out = encode_long(backbone, inputs["input_ids"], inputs["boundary"], inputs["dia"], inputs["punct"],
                               max_length=max_length, overlap=overlap, layers=list(range(depth + 1)))
    assert out is not None and out.hidden_states is not None
    stacked = torch.cat(out.hidden_states, dim=0).numpy()
    np.testing.assert_allclose(hidden, stacked, atol=2e-4, rtol=1e-4)


def _imported_modules(path: Path, line: str) -> list[str]:
    """Absolute module names an ``import`` / ``from ... import`` line of ``path`` brings in."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    if match := re.match(r"\s*from\s+(\.*)([\w.]*)\s+import\s+([\w, ]+?)(\s+as\s+\w+)?\s*(#|$)", line):
        dots, name, names = match.group(1), match.group(2), match.group(3)
        base = package.rsplit(".", len(dots) - 1)[0] if dots else ""
        root = ".".join(p for p in (base, name) if p)
        return [f"{root}.{n.strip()}" for n in names.split(",")]  # the names (modules or not)
    if match := re.match(r"\s*import\s+([\w.]+)", line):
        return [match.group(1)]
    return []


def test_no_registering_imports_or_private_spacy_linking() -> None:
    """Entry points register (see stoicheia_spacy.registrations); listeners link publicly."""
    from stoicheia_spacy.registrations import MODULES

    registering = {*MODULES}
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(PACKAGE)}:{number}"
            if "_link_components" in line:
                offenders.append(where)
            elif "noqa: F401" in line and set(_imported_modules(path, line)) & registering:
                offenders.append(where)
    assert offenders == []
