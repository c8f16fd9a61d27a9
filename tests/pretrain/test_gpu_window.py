"""The 15-minute GPU window (issue 28), end to end on CPU: prep, the printed call, the device
call with ``--device cpu`` (cut short, so that a second call resumes from the parts that came
back), and the install with bench quality before/after on a temporary copy of a model folder.

The corpus is the Agamemnon sample written as the corpus workflow writes ``doc_clean/``; the
model is the tiny char_bert fixture (float32, packed as bf16 like the shipped model); the
scansion silver (needs the mirror) has its own test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from pretrain.__main__ import main as pretrain_main
from pretrain.bundle import verify_bundle
from pretrain.gpu import (
    MANIFEST,
    RETURN_FILES,
    Snapshots,
    as_bf16,
    install,
    pack_safetensors,
    prep,
    read_snapshot,
    repack,
    unpack_safetensors,
)
from stoicheia_spacy.backbone import load_backbone
from stoicheia_spacy.errors import CheckpointError, CorpusError
from tests.conftest import TINY

# the tiny fixture's shape, trained in 128-letter windows; a fixed number of steps (no timing)
SMALL = ["data.row_len=256", "data.max_window=128", "data.dev_max_letters=2000", "train.micro_rows=2",
         "train.eval_every=4", "train.patience=2", "train.max_steps=16", "train.log_every=4"]


@pytest.fixture(scope="module")
def doc_clean(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    rows = [json.loads(x) for x in corpus.read_text(encoding="utf-8").splitlines()]
    (root / "doc_clean").mkdir()
    for split, part in (("train", rows[:80]), ("dev", rows[80:])):
        with (root / "doc_clean" / f"{split}.jsonl").open("w", encoding="utf-8") as fh:
            for i, r in enumerate(part):
                rec = {**r, "tier": r.get("tier") or "gold", "work": f"work{i % 7}"}
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return root


@pytest.fixture(scope="module")
def model(doc_clean: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model folder as the shipped one is laid out: backbone, held-out sample, a head folder."""
    root = tmp_path_factory.mktemp("models") / "grc_tiny"
    shutil.copytree(TINY, root)
    dev = (doc_clean / "doc_clean" / "dev.jsonl").read_text(encoding="utf-8")
    (root / "dev_sample.jsonl").write_text(dev, encoding="utf-8")
    (root / "scanner").mkdir()
    return root


@pytest.fixture(scope="module")
def window(doc_clean: Path, treebank: Path, model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("window") / ".bundle"
    prep(out, mirror=None, model=model, corpus=doc_clean, treebank=treebank,
         holdout=model / "dev_sample.jsonl", tree=10.0)
    return out


def test_packed_bf16_weights_are_exact(tmp_path: Path) -> None:
    data = as_bf16((TINY / "model.safetensors").read_bytes())
    meta = pack_safetensors(data, tmp_path / "init")
    assert unpack_safetensors(tmp_path / "init") == data
    assert meta["bytes"] == len(data)
    # the high bytes compress, the low bytes are stored as they are
    assert (tmp_path / "init" / "hi.xz").stat().st_size < meta["values"]
    assert (tmp_path / "init" / "lo.bin").stat().st_size == meta["values"]
    raw = bytearray((tmp_path / "init" / "lo.bin").read_bytes())
    raw[5] ^= 1
    (tmp_path / "init" / "lo.bin").write_bytes(bytes(raw))
    with pytest.raises(CheckpointError):
        unpack_safetensors(tmp_path / "init")
    with pytest.raises(CheckpointError, match="bf16"):
        pack_safetensors((TINY / "model.safetensors").read_bytes(), tmp_path / "f32")


def test_prep_fills_the_room_and_keeps_the_held_out_text_out(window: Path, model: Path) -> None:
    manifest = verify_bundle(window)
    assert {"init/hi.xz", "init/lo.bin", "init/config.json", "pretrain/train.planes.xz",
            "treebank/fold0_train.spacy.xz"} <= set(manifest["files"])
    counts = manifest["counts"]
    train = counts["pretrain"]["train"]
    assert train["letters"] > 10_000 and counts["pretrain"]["dev"]["letters"] > 1_000
    assert train["capped"] is False  # the whole sample fits
    assert train["records"] + train.get("held_out_dropped", 0) == 80
    assert counts["treebank"]["train"]["docs"] == 1
    assert manifest["settings"]["window"]["tree_mib"] == 10.0
    # the bf16 init unpacks to the tiny model's weights (fixture is float32)
    w = unpack_safetensors(window / "init")
    assert len(w) < (TINY / "model.safetensors").stat().st_size


def test_prep_caps_the_planes_to_the_room(doc_clean: Path, treebank: Path, model: Path, tmp_path: Path) -> None:
    # a tree that leaves ~1.6 MiB: the cap takes whole records until the room is used
    with pytest.raises(CorpusError, match="no room"):
        prep(tmp_path / "b", mirror=None, model=model, corpus=doc_clean, treebank=treebank, tree=63.0)


def test_the_printed_call_fits_one_device_call(window: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert pretrain_main(["gpu", "args", "--bundle", str(window)]) == 0
    text = capsys.readouterr().out
    call = json.loads(text[text.index("{") : text.rindex("}") + 1])
    assert call["timeout_s"] <= 560 and call["carry"] == [str(window)]
    assert len(call["command"]) <= 2000
    assert "pretrain gpu train" in call["command"] and "--device cuda" in call["command"] and "$OUT" in call["command"]
    assert "device-tree on" in text and "device-tree off" in text and "make gpu-install" in text


def test_snapshots_never_leave_more_files_than_come_back(tmp_path: Path) -> None:
    snaps = Snapshots(tmp_path, part_mib=0.001)
    for step in range(3):
        snaps.write(bytes([step]) * 2500, {"step": step})
        assert len(list(tmp_path.iterdir())) <= RETURN_FILES
    manifest = json.loads((tmp_path / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["status"]["step"] == 2 and len(manifest["parts"]) == 3
    with pytest.raises(CheckpointError, match="returned files"):
        snaps.write(b"x" * 6000, {"step": 3})  # 6 parts: two snapshots could not come back


def test_whole_window_on_cpu(window: Path, model: Path, tmp_path: Path) -> None:
    common = ["--bundle", str(window), "--device", "cpu", "--budget-s", "0", "--call-s", "300",
              "--snapshot-s", "0", "--part-mib", "0.2", "--threads", "1", "--set", *SMALL]
    # call 1 is cut short after 6 of its steps (as a timeout would): a snapshot is there
    out1 = tmp_path / "out1"
    assert pretrain_main(["gpu", "train", "--out", str(out1), "--run", str(tmp_path / "run1"),
                          "--call-steps", "6", "--synthetic-steps", "0", *common]) == 0
    files = sorted(p.name for p in out1.iterdir())
    assert len(files) <= RETURN_FILES and MANIFEST in files
    assert all(p.stat().st_size <= 0.2 * 2**20 for p in out1.iterdir())
    manifest, snap = read_snapshot(out1)
    status = manifest["status"]
    assert status["step"] == 6 and not status["finished"] and status["weights"] == "last"
    assert status["resumed_from_step"] is None and status["letters"] == 6 * 2 * 256
    assert status["first_dev_bpc"] is not None and status["first_step_s"] >= 0
    assert status["init_dev_bpc"] > 0  # the dev bpc of the init weights, before any step
    assert all(v.dtype == torch.bfloat16 for v in snap["model"].values() if v.is_floating_point())
    # the machine is lost: the returned parts become the next call's init
    status = repack(out1, window)
    assert verify_bundle(window)["counts"]["init"]["resume_step"] == 6
    out2 = tmp_path / "out2"
    assert pretrain_main(["gpu", "train", "--out", str(out2), "--run", str(tmp_path / "run2"),
                          "--synthetic-steps", "1", *common]) == 0
    manifest, snap = read_snapshot(out2)
    status = manifest["status"]
    assert "init_dev_bpc" not in status
    assert status["resumed_from_step"] == 6 and status["finished"] and status["step"] == status["end_step"] == 16
    assert status["weights"] == "best" and status["letters"] == 16 * 2 * 256
    assert status["synthetic"]["rows"] == 2 and status["ratio_to_synthetic"] > 0
    assert "synthetic" not in read_snapshot(out1)[0]["status"]
    assert [h["step"] for h in snap["history"]] == list(range(1, 17))
    with pytest.raises(CheckpointError, match="finished"):
        repack(out2, window)

    # install on a copy of the model folder: bench quality before/after with the control
    target = tmp_path / "models" / "grc_tiny"
    shutil.copytree(model, target)
    before = (target / "model.safetensors").read_bytes()
    result = install(out2, target, metrics=tmp_path / "metrics.json", dev_letters=3000)
    saved = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))
    bpc = saved["masked_bpc"]
    assert saved["installed"] == result["installed"] == (bpc["after"] < bpc["before"])
    assert bpc["before"] == saved["bench_quality"]["before"]["rows"][0]["bpc"]
    assert bpc["random_init_control"] == saved["bench_quality"]["after"]["rows"][1]["bpc"]  # same control
    assert saved["window"]["step"] == 16
    after = (target / "model.safetensors").read_bytes()
    assert (after != before) == saved["installed"]
    if saved["installed"]:
        assert saved["heads_to_refit"] == {"scanner": "projects/meter: weasel run train"}
    # --force installs regardless; the folder then loads with its sha256 file
    result = install(out2, target, metrics=None, dev_letters=3000, force=True)
    assert result["installed"]
    loaded = load_backbone(target)
    assert loaded.config.d_model == 64 and (target / "model.safetensors.sha256").is_file()
    assert (target / "dev_sample.jsonl").is_file() and (target / "scanner").is_dir()
    # a damaged part is refused before anything is touched
    part = out2 / manifest["parts"][0]["file"]
    part.write_bytes(part.read_bytes()[:-1] + b"\0")
    with pytest.raises(CheckpointError, match="sha256"):
        install(out2, target, metrics=None)


def test_scansion_silver_travels_with_the_mirror(shared_data: Path, doc_clean: Path, treebank: Path, model: Path,
                                                 tmp_path: Path) -> None:
    manifest = prep(tmp_path / "b", mirror=shared_data, model=model, corpus=doc_clean, treebank=treebank,
                    limit=20, tree=10.0)
    assert "scansion/silver.jsonl.xz" in manifest["files"]
    assert manifest["settings"]["parts"] == ["pretrain", "treebank", "scansion", "init"]


def test_plane_cap_takes_whole_records_until_the_room_is_used(tmp_path: Path) -> None:
    import numpy as np

    from pretrain.planes import read_plane_corpus, write_plane_corpus
    from stoicheia_spacy.codec import CharPlanes

    rng = np.random.default_rng(0)

    def record(n: int) -> CharPlanes:  # incompressible planes: 200k letters, ~0.3 MB of xz each
        z = np.zeros(n, np.uint8)
        return CharPlanes(letters=rng.integers(0, 24, n).astype(np.uint8), boundary=rng.integers(0, 4, n).astype(np.uint8),
                          diacritics=rng.integers(0, 49, n).astype(np.uint8), capitals=z, punctuation=z,
                          offsets=np.arange(n))

    counts = write_plane_corpus(((record(200_000), 0) for _ in range(20)), tmp_path, "train", preset=0,
                                max_bytes=2 * 2**20)
    assert counts["capped"] and 0 < counts["records"] < 20
    assert (tmp_path / "train.planes.xz").stat().st_size <= 2.5 * 2**20
    assert read_plane_corpus(tmp_path, "train").letters == counts["letters"] == 200_000 * counts["records"]


def test_the_device_call_imports_neither_spacy_nor_datasets(window: Path, tmp_path: Path) -> None:
    """The device image has no spaCy: the call runs with spaCy, thinc and datasets unimportable."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('spacy', 'thinc', 'datasets', 'weasel'):\n"
        "            raise ImportError('not on the device image: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from pretrain.__main__ import main\n"
        f"sys.exit(main(['gpu', 'train', '--bundle', {str(window)!r}, '--out', {str(tmp_path / 'out')!r},"
        f" '--run', {str(tmp_path / 'run')!r}, '--device', 'cpu', '--threads', '1', '--budget-s', '0',"
        " '--call-s', '300', '--call-steps', '2', '--synthetic-steps', '1', '--set', *" + repr(SMALL) + "]))\n"
    )
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    manifest, _ = read_snapshot(tmp_path / "out")
    assert manifest["status"]["letters_this_call"] == 2 * 2 * 256 and manifest["status"]["synthetic"]["rows"] == 2
