"""The portable bundle, weights in parts, the GPU data path and the chained run, on CPU.

A bundle is built from a small doc-clean corpus (Agamemnon records written the way the
corpus workflow writes ``doc_clean/{train,dev}.jsonl``), a small sample of the mirror's
papyri and scansion silver (skipped without the mirror) and a one-document treebank fold.
The chain test runs the whole GPU recipe with ``--device cpu`` and a tiny budget: two
calls, the loss of the machine's disk, the returned parts, and the install.
"""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import numpy as np
import pytest
import torch

from pretrain.bundle import build_bundle, verify_bundle
from pretrain.chain import main_chain, parse_shape
from pretrain.config import build_config
from pretrain.parts import reassemble, split_files
from pretrain.planes import PlaneStream, pack_planes, read_plane_corpus, unpack_planes
from stoicheia_spacy import alphabet as A
from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import CheckpointError, CorpusError


@pytest.fixture(scope="module")
def doc_clean(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    rows = [json.loads(x) for x in corpus.read_text(encoding="utf-8").splitlines()]
    (root / "doc_clean").mkdir()
    for split, part in (("train", rows[:80]), ("dev", rows[80:])):
        with (root / "doc_clean" / f"{split}.jsonl").open("w", encoding="utf-8") as fh:
            for r in part:
                fh.write(json.dumps({**r, "tier": r.get("tier") or "gold"}, ensure_ascii=False) + "\n")
    return root


@pytest.fixture(scope="module")
def bundle(doc_clean: Path, treebank: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle")
    # bench quality's held-out sample: a passage of training record 10 under another id
    text = json.loads((doc_clean / "doc_clean" / "train.jsonl").read_text(encoding="utf-8").splitlines()[10])["text"]
    holdout = out.parent / "dev_sample.jsonl"
    holdout.write_text(json.dumps({"id": "elsewhere:1", "text": " ".join(text.split()[2:14])}, ensure_ascii=False) + "\n",
                       encoding="utf-8")
    build_bundle(out, mirror="/nonexistent", corpus=doc_clean, treebank=treebank, parts=["pretrain", "treebank"],
                 holdout=holdout)
    return out


def test_planes_pack_losslessly(corpus: Path) -> None:
    text = json.loads(corpus.read_text(encoding="utf-8").splitlines()[3])["text"] + " Ἀθῆναι; [...]"
    planes = encode_planes(text)
    back = unpack_planes(pack_planes(planes))
    for name, arr in back.items():
        np.testing.assert_array_equal(arr, getattr(planes, name), err_msg=name)


def test_bundle_holds_the_corpus_with_counts_and_checksums(bundle: Path, doc_clean: Path) -> None:
    manifest = verify_bundle(bundle)
    train = read_plane_corpus(bundle / "pretrain", "train")
    texts = [json.loads(x)["text"] for x in (doc_clean / "doc_clean" / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    assert manifest["counts"]["pretrain"]["train"]["held_out_dropped"] == 1
    del texts[10]  # shares word 8-grams with the held-out sample
    assert manifest["counts"]["pretrain"]["train"]["records"] == len(train) == len(texts)
    assert manifest["counts"]["pretrain"]["train"]["letters"] == train.letters == sum(len(encode_planes(t)) for t in texts)
    rec = train.record(7)
    np.testing.assert_array_equal(rec.letters, encode_planes(texts[7]).letters)
    assert manifest["counts"]["treebank"]["train"]["docs"] == 1
    assert set(manifest["files"]) >= {"pretrain/train.planes.xz", "pretrain/dev.index.npz", "treebank/fold0_dev.spacy.xz"}
    # a damaged file is caught
    import spacy
    from spacy.tokens import DocBin

    from pretrain.bundle import unpack_treebank

    (spacy_file,) = [p for p in unpack_treebank(bundle, bundle.parent / "unpacked") if p.name == "dev.spacy"]
    docs = list(DocBin().from_disk(spacy_file).get_docs(spacy.blank("grc").vocab))
    assert docs[0].text.startswith("μῆνιν")
    damaged = bundle / "treebank" / "fold0_dev.spacy.xz"
    data = damaged.read_bytes()
    damaged.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    try:
        with pytest.raises(CorpusError, match="does not match"):
            verify_bundle(bundle)
    finally:
        damaged.write_bytes(data)


def test_bundle_needs_the_corpus_workflow_output(tmp_path: Path, treebank: Path) -> None:
    with pytest.raises(CorpusError, match="corpus workflow"):
        build_bundle(tmp_path / "b", mirror="/x", corpus=tmp_path, treebank=treebank, parts=["pretrain"])


def test_bundle_papyri_and_scansion_from_the_mirror(shared_data: Path, tmp_path: Path) -> None:
    manifest = build_bundle(tmp_path, mirror=shared_data, corpus=tmp_path, treebank=tmp_path,
                            parts=["papyri", "scansion"], limit=30)
    assert manifest["counts"]["papyri"]["records"] == 30
    rows = [json.loads(x) for x in lzma.open(tmp_path / "papyri" / "ddbdp.jsonl.xz", "rt", encoding="utf-8")]
    assert all(r["text"] and r["id"] for r in rows)
    lines = [json.loads(x) for x in lzma.open(tmp_path / "scansion" / "silver.jsonl.xz", "rt", encoding="utf-8")]
    assert len(lines) == 30 and all(len(x["scan"]) == len(encode_planes(x["text"])) for x in lines)


def test_plane_stream_fills_rows_with_corrupted_windows(bundle: Path) -> None:
    cfg = build_config("tiny", "smoke").data
    stream = PlaneStream(read_plane_corpus(bundle / "pretrain", "train"), cfg, seed=0)
    batch = stream.next_batch(3)
    assert batch["input_ids"].shape == (3, cfg.row_len)
    assert (batch["seg_id"] > 0).all()  # rows are full
    assert (batch["input_ids"] == A.MASK_ID).any() and (batch["char_weight"] > 0).any()
    # resumable: the same batches after a state round trip
    state = stream.state_dict()
    a = stream.next_batch(2)
    stream2 = PlaneStream(read_plane_corpus(bundle / "pretrain", "train"), cfg, seed=0)
    stream2.load_state_dict(state)
    b = stream2.next_batch(2)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_split_and_reassemble_verify_and_install(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"d_model": 8}', encoding="utf-8")
    blob = np.random.default_rng(0).bytes(300_000)
    (model / "model.safetensors").write_bytes(blob)
    manifest = split_files(model, tmp_path / "parts", part_mib=0.1, max_files=8, prefix="best.")
    assert len(manifest["files"]["model.safetensors"]["parts"]) == 3
    dest = tmp_path / "installed"
    dest.mkdir()
    (dest / "heads.bin").write_bytes(b"kept")
    reassemble(tmp_path / "parts", dest, prefix="best.")
    assert (dest / "model.safetensors").read_bytes() == blob
    assert (dest / "heads.bin").read_bytes() == b"kept"
    assert (dest / "model.safetensors.sha256").read_text().split()[0] == manifest["files"]["model.safetensors"]["sha256"]
    piece = tmp_path / "parts" / manifest["files"]["model.safetensors"]["parts"][1]["file"]
    piece.write_bytes(piece.read_bytes()[:-1] + b"\0")
    with pytest.raises(CheckpointError, match="sha256"):
        reassemble(tmp_path / "parts", tmp_path / "other", prefix="best.")
    with pytest.raises(CheckpointError, match="more than 2 files"):
        split_files(model, tmp_path / "few", part_mib=0.1, max_files=2)


def test_parse_shape() -> None:
    assert parse_shape("d512h8x10") == {"d_model": 512, "n_heads": 8, "depth": 10}
    with pytest.raises(ValueError):
        parse_shape("512x10")


def test_chain_on_cpu_survives_a_lost_machine_and_installs(bundle: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    common = ["--data", str(bundle), "--run", str(tmp_path / "run"), "--budget-s", "4", "--preset", "tiny",
              "--train-preset", "smoke", "--device", "cpu", "--threads", "1",
              "--set", "train.calibrate_steps=2", "train.max_steps=100000", "train.eval_every=4"]
    assert main_chain([*common, "--out", str(tmp_path / "out1"), "--call-s", "1"]) == 0
    first = json.loads((tmp_path / "out1" / "status.json").read_text())
    assert not first["finished"] and first["returned"] == ["resume"]
    # the machine is lost: a fresh disk continues from the returned parts
    (tmp_path / "run" / "last.pt").unlink()
    assert main_chain([*common, "--out", str(tmp_path / "out2"), "--call-s", "60", "--restore", str(tmp_path / "out1")]) == 0
    second = json.loads((tmp_path / "out2" / "status.json").read_text())
    # the time budget sets the planned steps (far below max_steps=100000); a slower moment than the
    # calibration may end the budget a little before them, so the plan bounds the steps taken
    assert second["finished"] and 100000 > second["max_steps"] >= second["step"] > first["step"]
    assert second["returned"] == ["best", "resume"]
    assert len(list((tmp_path / "out2").iterdir())) <= 8
    dest = tmp_path / "assets" / "models" / "new"
    reassemble(tmp_path / "out2", dest, prefix="best.")
    from stoicheia_spacy.backbone import load_backbone

    assert load_backbone(dest).config.d_model == 64


def test_bench_on_the_bundle_prints_the_ratio_to_synthetic_rows(bundle: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from pretrain.bench import main as bench_main

    assert bench_main(["--device", "cpu", "--quick", "--threads", "1", "--data", str(bundle),
                       "--json", str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    assert "end-to-end on the bundle / synthetic rows" in out
    results = json.loads((tmp_path / "b.json").read_text())["results"]
    assert [r["data"] for r in results] == ["synthetic", "bundle"] and results[1]["ratio_to_synthetic"] > 0


def test_sweep_rejects_shapes_over_the_limits_and_ranks_the_rest(bundle: Path, tmp_path: Path) -> None:
    from pretrain.chain import main_sweep

    torch.set_num_threads(1)
    args = ["--data", str(bundle), "--run", str(tmp_path / "sweep"), "--out", str(tmp_path / "out"),
            "--shapes", "d64h4x2,d96h4x2", "--seconds-each", "2", "--call-s", "60", "--max-backbone-mb", "0.3",
            "--cpu-letters", "256", "--preset", "tiny", "--train-preset", "smoke", "--device", "cpu", "--threads", "1",
            "--set", "train.calibrate_steps=2"]
    assert main_sweep(args) == 0
    state = json.loads((tmp_path / "out" / "sweep.json").read_text())
    verdict = {c["shape"]: c for c in state["candidates"]}
    assert verdict["d64h4x2"]["ok"] and not verdict["d96h4x2"]["ok"]  # 0.2 vs 0.4 MB in bf16
    assert verdict["d64h4x2"]["cpu_ratio"] > 1  # far smaller than the shipped shape
    assert state["best"] == "d64h4x2" and state["results"]["d64h4x2"]["best_dev_bpc"] > 0


def test_bundle_run_resumes_with_the_losses_of_an_uninterrupted_one(bundle: Path, tmp_path: Path) -> None:
    from pretrain.trainer import SimulatedCrash, Trainer

    overrides = ["train.max_steps=8", "train.ckpt_every=3", "train.eval_every=4", "train.accum=2",
                 "train.micro_rows=1", "train.threads=1", "train.device=cpu"]

    def trainer(out: Path, *extra: str) -> Trainer:
        return Trainer(build_config("tiny", "smoke", [*overrides, *extra]), str(bundle), out)

    full = trainer(tmp_path / "full").run()
    assert full.step == 8 and full.losses()[-1] < full.losses()[0]
    with pytest.raises(SimulatedCrash):
        trainer(tmp_path / "crash", "train.fail_at_step=5").run()
    resumed = trainer(tmp_path / "crash").run()
    assert resumed.losses() == pytest.approx(full.losses(), rel=0, abs=1e-6)
    assert [h["dev_bpc"] for h in resumed.history if "dev_bpc" in h] == pytest.approx(
        [h["dev_bpc"] for h in full.history if "dev_bpc" in h], abs=1e-6)
