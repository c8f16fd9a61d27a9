"""Restoration overlays: only the top blocks + heads are stored, applied to a copy of the
backbone, checked against the base they were trained on, and carried by the restorer pipe."""

from __future__ import annotations

from pathlib import Path

import pytest
import spacy
import torch

from stoicheia_spacy.assembly import build_pipeline
from stoicheia_spacy.backbone import load_backbone
from stoicheia_spacy.backbone.overlay import (
    MappedOverlay,
    apply_overlay,
    read_overlay,
    save_overlay,
    trainable_names,
)
from stoicheia_spacy.errors import CheckpointError
from tests.conftest import TINY

TEXT = "ἔδοξε τῆι βουλῆι [.4] τῶι δήμωι"
torch.set_num_threads(1)


def _finetuned(top: int = 1) -> tuple[torch.nn.Module, torch.nn.Module, list[str]]:
    base = load_backbone(str(TINY))
    tuned = load_backbone(str(TINY))
    names = trainable_names(tuned, top)
    with torch.no_grad():
        for name, param in tuned.named_parameters():
            if name in names:
                param.add_(0.5 * torch.randn_like(param))
    return base, tuned, names


def test_trainable_names_are_the_top_blocks_the_output_norm_and_heads() -> None:
    model = load_backbone(str(TINY))
    n_blocks = len({n.split(".")[1] for n, _ in model.named_parameters() if n.startswith("blocks.")})
    names = trainable_names(model, 1)
    assert {n.split(".")[1] for n in names if n.startswith("blocks.")} == {str(n_blocks - 1)}
    assert "norm_out.w" in names and "head_char.weight" in names
    assert not any(n.startswith(("embed", "blocks.0.")) for n in names)
    with pytest.raises(ValueError, match="top_layers"):
        trainable_names(model, n_blocks + 1)


def test_loaded_overlay_holds_no_tensors_until_its_view_is_built(tmp_path: Path) -> None:
    """The default restorer kept its overlay's bf16 tensors (14.9 MB) alive although it decodes
    papyri without the backbone: a mapped overlay holds none, survives its file, and reads back
    the same tensors."""
    import gc

    base, tuned, names = _finetuned()
    save_overlay(tuned, names, tmp_path)
    want, meta = read_overlay(tmp_path)
    overlay = MappedOverlay(tmp_path)
    (tmp_path / "overlay.safetensors").unlink()  # a temporary folder removed after loading
    assert not any(isinstance(obj, torch.Tensor) for obj in gc.get_referents(*vars(overlay).values()))
    tensors, got_meta = overlay
    assert got_meta == meta and set(tensors) == set(want) == set(names)
    assert all(torch.equal(tensors[k], want[k]) for k in want)
    with torch.no_grad():
        ids = torch.randint(0, 24, (1, 12))
        zeros = torch.zeros_like(ids)
        assert torch.equal(apply_overlay(base, *overlay)(ids, zeros, zeros, zeros).char,
                           apply_overlay(base, want, meta)(ids, zeros, zeros, zeros).char)


def test_overlay_reproduces_the_finetuned_model_and_leaves_the_base_alone(tmp_path: Path) -> None:
    base, tuned, names = _finetuned()
    before = {k: v.clone() for k, v in base.state_dict().items()}
    path = save_overlay(tuned, names, tmp_path, dtype=torch.float32)
    tensors, meta = read_overlay(tmp_path)
    assert path.name == "overlay.safetensors" and set(tensors) == set(names)
    merged = apply_overlay(base, tensors, meta)
    ids = torch.randint(0, 24, (1, 12))
    zeros = torch.zeros_like(ids)
    with torch.no_grad():
        want = tuned.eval()(ids, zeros, zeros, zeros).char
        got = merged(ids, zeros, zeros, zeros).char
        plain = base.eval()(ids, zeros, zeros, zeros).char
    assert torch.allclose(got, want, atol=1e-5)
    assert not torch.allclose(plain, want, atol=1e-3)
    assert all(torch.equal(before[k], v) for k, v in base.state_dict().items())


def test_overlay_for_another_base_or_damaged_file_is_refused(tmp_path: Path) -> None:
    base, tuned, names = _finetuned()
    save_overlay(tuned, names, tmp_path)
    tensors, meta = read_overlay(tmp_path)
    other = load_backbone(str(TINY))
    with torch.no_grad():
        next(p for n, p in other.named_parameters() if n not in names).add_(1.0)
    with pytest.raises(CheckpointError, match="another backbone"):
        apply_overlay(other, tensors, meta)
    with pytest.raises(CheckpointError, match="not a tensor"):
        apply_overlay(base, {"blocks.99.n1.w": torch.ones(3)}, meta)
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes((tmp_path / "overlay.safetensors").read_bytes()[:100])
    with pytest.raises(CheckpointError, match="not a readable"):
        read_overlay(bad)
    with pytest.raises(CheckpointError, match="no restoration overlay"):
        read_overlay(tmp_path / "missing")


def test_restorer_pipe_uses_and_serializes_its_overlay(tmp_path: Path) -> None:
    base, tuned, names = _finetuned()
    save_overlay(tuned, names, tmp_path / "overlay", dtype=torch.float32)
    nlp = build_pipeline(str(TINY))
    pipe = nlp.add_pipe("stoicheia_restorer", config={"settings": {"beam_width": 4, "n_candidates": 4}})
    plain = nlp(TEXT)._.restorations[0].candidates
    pipe.set_overlay(tmp_path / "overlay")
    tuned_cands = nlp(TEXT)._.restorations[0].candidates
    assert tuned_cands != plain
    assert pipe.backbone() is not nlp.get_pipe("stoicheia_encoder").model  # a private copy
    nlp.to_disk(tmp_path / "pipeline")
    assert (tmp_path / "pipeline" / "stoicheia_restorer" / "overlay.safetensors").exists()
    again = spacy.load(tmp_path / "pipeline")
    assert again(TEXT)._.restorations[0].candidates == tuned_cands
    restorer = again.get_pipe("stoicheia_restorer")
    clone = nlp.get_pipe("stoicheia_restorer").to_bytes()
    restorer.set_overlay(None)
    assert again(TEXT)._.restorations[0].candidates == plain
    restorer.from_bytes(clone)
    assert again(TEXT)._.restorations[0].candidates == tuned_cands
    restorer.configure(use_overlay=False)
    assert again(TEXT)._.restorations[0].candidates == plain


def test_default_package_restorer_carries_its_papyrus_overlay(default_parts) -> None:  # type: ignore[no-untyped-def]
    nlp = default_parts("stoicheia_restorer")  # the default config's encoder + restorer
    restorer = nlp.get_pipe("stoicheia_restorer")
    shipped = {k: restorer.cfg[k] for k in ("kn_weights", "lm_weight", "lm_rescore", "unmask", "final_forward")}
    service = restorer.parallels
    restorer.parallels = None  # the model's own order: the shipped parallels rerank reorders the list
    try:
        _overlay_restores_the_greeting(nlp, restorer)
    finally:
        restorer.configure(**shipped)  # the session's pipeline keeps the shipped settings
        restorer.parallels = service


def _overlay_restores_the_greeting(nlp, restorer) -> None:  # type: ignore[no-untyped-def]
    assert restorer.overlay is not None
    # the calibration fitted on dev gaps (projects/restore/calibration.json): a temperature per width bucket
    assert {"1-3", "range", "unknown", "default"} <= set(restorer.cfg["temperatures"])
    assert len(restorer.cfg["width_log_prior"]) == restorer.cfg["max_letters"]
    # the default decodes with the Kneser-Ney 8-gram alone (RESULTS.md Run 11): no bucket weighs the backbone
    assert restorer.cfg["kn_weights"] and all(w[0] == 0 for w in restorer.cfg["kn_weights"].values())
    # inscriptions (Run 14): no longer the backbone, their own sources (the data package's
    # domains/inscription) and their own calibration instead
    inscription = restorer.settings.domain_weights("inscription")
    assert all(w[0] == 0 for w in inscription.values()) and restorer.cfg["domain"] == "auto"
    assert restorer.cfg["domain_sources"] == {"inscription": "inscription"}
    # hidden widths (Run 16): an "unknown" row too
    assert set(restorer.cfg["domain_source_weights"]["inscription"]) == {"default", "1-3", "4-6", "7-10", "unknown"}
    assert restorer.settings.confident_above_for("inscription") != restorer.cfg["confident_above"]
    tensors, meta = restorer.overlay
    assert meta["top_layers"] == "4" and any(name.startswith("blocks.11.") for name in tensors)
    tuned = restorer.backbone()  # the fingerprint of the shipped backbone matches
    assert tuned is not nlp.get_pipe("stoicheia_encoder").model
    # the overlay alone (exact beam, no n-gram LM): χαίρειν, the letter's greeting
    restorer.configure(kn_weights={}, lm_weight=0.0, lm_rescore=0.0, unmask=1, final_forward=True)
    doc = nlp("Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου [.3]ρειν.")
    [item] = doc._.restorations
    assert len(item.candidates) > 1 and all(len(c.text) == 3 for c in item.candidates)
    assert "χαι" in [c.text for c in item.candidates[:3]]
    # the settings of Run 10 (the 7-gram fused and rescoring): the decree formula's καί among the top 3
    restorer.configure(lm_weight=1.0, lm_rescore=1.0, unmask=2, final_forward=False)
    [item] = nlp("ἔδοξε τῇ βουλῇ [.3] τῷ δήμῳ")._.restorations
    assert "και" in [c.text for c in item.candidates[:3]]
    probs = [c.share for c in item.candidates]
    assert abs(sum(probs) - 1.0) < 1e-6 and probs == sorted(probs, reverse=True)  # normalised over the list
