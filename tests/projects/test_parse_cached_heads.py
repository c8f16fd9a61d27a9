"""projects/parse cached-feature recipe at CI size on 12 real AGDT sentences and the golden tiny
backbone: cache_features.py writes the pooled word vectors (fp16 chunks, keyed by the backbone's
sha256 and the mixes; a rerun has nothing to do), train_cached.py trains the three heads on them
in two legs (the second resumes from the checkpoint), and the saved heads load into a pipeline
on the same backbone with from_disk and annotate real Greek."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import spacy
import torch
from scriptload import load_script
from spacy.tokens import Doc, DocBin

from stoicheia_spacy.assembly import build_pipeline
from tests.conftest import TINY

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "projects" / "parse" / "scripts"
CONFIG = REPO / "assets" / "configs" / "parse_heads_cached.cfg"
HYBRID = REPO / "assets" / "configs" / "parse_heads_hybrid.cfg"
HEADS = ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")
torch.set_num_threads(1)

cache_features = load_script(SCRIPTS / "cache_features.py", "parse_cache_features")
train_cached = load_script(SCRIPTS / "train_cached.py", "parse_train_cached")
training_cost = load_script(SCRIPTS / "training_cost.py", "parse_training_cost")
compare_heads = load_script(SCRIPTS / "compare_heads.py", "parse_compare_heads")



def test_cache_then_train_in_legs_then_load(docbin: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    cache = tmp_path / "features"
    for split in ("train", "dev"):
        assert cache_features.main([str(TINY), str(docbin), str(cache), "--split", split, "--chunk", "5",
                                    "--quiet"]) == 0
    (key,) = [p for p in cache.iterdir() if p.is_dir()]
    meta = json.loads((key / "meta.json").read_text())
    assert len(meta["backbone_sha256"]) == 64 and meta["dtype"] == "float16"
    chunks = sorted((key / "train").glob("chunk_*.npz"))
    assert len(chunks) == 3  # 12 sentences, 5 a chunk
    z = np.load(chunks[0])
    assert z["feats_stoicheia_parser"].dtype == np.float16
    assert z["feats_stoicheia_parser"].shape == (int(z["sent_lengths"].sum()), 64)

    # the cached vector of a word is the word pooler's output on the live encoder (uniform mix)
    nlp = build_pipeline(str(TINY), components=False)
    sents = [s.as_doc() for d in DocBin().from_disk(docbin).get_docs(nlp.vocab) for s in d.sents]
    first = sents[int(z["sent_index"][0])]
    doc = Doc(nlp.vocab, words=[t.text for t in first], spaces=[bool(t.whitespace_) for t in first])
    data = nlp.get_pipe("stoicheia_encoder").predict([doc])[0]
    hidden = np.asarray(data.hidden, dtype=np.float32)
    live = cache_features.pool(hidden, np.asarray(data.token_lengths), [0.0] * hidden.shape[0])
    n = int(z["sent_lengths"][0])
    assert np.allclose(z["feats_stoicheia_parser"][:n].astype(np.float32), live, atol=2e-2)

    capsys.readouterr()
    assert cache_features.main([str(TINY), str(docbin), str(cache), "--split", "train", "--chunk", "5",
                                "--quiet"]) == 0
    assert "0 to do" in capsys.readouterr().out  # resumable: finished chunks are kept

    out = tmp_path / "heads"
    overrides = json.dumps({"eval_every": 2, "checkpoint_every": 2, "batch_size": 4})
    common = [str(CONFIG), str(key), str(docbin), str(docbin), str(out), "--train-split", "train",
              "--dev-split", "dev", "--overrides", overrides]
    assert train_cached.main([*common, "--max-steps", "2"]) == 0
    assert json.loads((out / "checkpoint" / "state.json").read_text())["step"] == 2
    assert train_cached.main([*common, "--max-steps", "4"]) == 0
    assert "resumed at step 2" in capsys.readouterr().out
    state = json.loads((out / "checkpoint" / "state.json").read_text())
    assert state["step"] == 4 and [e["step"] for e in state["evals"]] == [0, 2, 4]

    # the saved heads are component folders the pipeline reads with from_disk
    _add_heads(nlp, CONFIG, out / "best")
    doc = nlp("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος")
    assert all(t.pos_ and t.tag_ and t.lemma_ for t in doc)
    assert sum(t.head.i == t.i for t in doc) == 1  # one tree with one root (mst_single_root)


def _add_heads(nlp: spacy.Language, config_path: Path, folder: Path, width: int = 64) -> None:
    """The heads of ``config_path`` at the tiny backbone's width, weights read from ``folder``."""
    config = spacy.util.load_config(config_path)
    for name in HEADS:
        nlp.add_pipe(name, config=train_cached.head_block(config, name, width)).from_disk(folder / name)


def test_heads_with_form_embeddings_train_on_the_cache_and_load(docbin: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture) -> None:
    """parse_heads_hybrid.cfg: the cached backbone vectors beside trainable form embeddings,
    on the first 6 cached sentences only (--train-limit, the random-init control's sample)."""
    cache = tmp_path / "features"
    for split in ("train", "dev"):
        assert cache_features.main([str(TINY), str(docbin), str(cache), "--split", split, "--chunk", "6",
                                    "--quiet"]) == 0
    (key,) = [p for p in cache.iterdir() if p.is_dir()]
    out = tmp_path / "heads"
    overrides = json.dumps({"eval_every": 3, "checkpoint_every": 3, "batch_size": 4})
    assert train_cached.main([str(HYBRID), str(key), str(docbin), str(docbin), str(out), "--train-split", "train",
                              "--dev-split", "dev", "--overrides", overrides, "--max-steps", "3",
                              "--train-limit", "6"]) == 0
    assert "6 cached train sentences" in capsys.readouterr().out
    cost = tmp_path / "cost.json"
    assert training_cost.main([str(cost), "--run", f"hybrid={out}", "--cache", str(key / "train")]) == 0
    costs = json.loads(cost.read_text())
    assert costs["runs"]["hybrid"]["steps"] == 3 and costs["runs"]["hybrid"]["cpu_seconds"] > 0
    assert costs["caches"][0]["chunks_logged"] == 2 and costs["caches"][0]["cpu_seconds"] > 0
    nlp = build_pipeline(str(TINY), components=False)
    _add_heads(nlp, HYBRID, out / "best")
    doc = nlp("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος")
    assert all(t.pos_ and t.tag_ and t.lemma_ for t in doc)
    assert sum(t.head.i == t.i for t in doc) == 1
    # the form embeddings are part of the saved heads: another form, another input row
    embed = nlp.get_pipe("stoicheia_parser").model.get_ref("tok2vec").get_ref("embed").get_ref("embed")
    rows = embed.predict([doc])[0]
    assert rows.shape == (len(doc), 96) and not np.allclose(rows[0], rows[1])


def test_random_init_control_is_scored_on_the_backbone_it_was_cached_from(docbin: Path, tmp_path: Path) -> None:
    """cache_features.py --random-init and compare_heads.py --random-init re-initialise the same
    seeded backbone: the scored encoder's sha256 is the one the cache names."""
    cache = tmp_path / "features"
    for split in ("train", "dev"):
        assert cache_features.main([str(TINY), str(docbin), str(cache), "--split", split, "--chunk", "6",
                                    "--quiet", "--random-init"]) == 0
    (key,) = [p for p in cache.iterdir() if p.is_dir()]
    meta = json.loads((key / "meta.json").read_text())
    assert meta["random_init"] is True
    out = tmp_path / "heads"
    overrides = json.dumps({"eval_every": 2, "checkpoint_every": 2, "batch_size": 4})
    assert train_cached.main([str(HYBRID), str(key), str(docbin), str(docbin), str(out), "--train-split", "train",
                              "--dev-split", "dev", "--overrides", overrides, "--max-steps", "2"]) == 0

    def scored(*extra: str) -> dict:
        path = tmp_path / f"compare{len(extra)}.json"
        assert compare_heads.main([str(docbin), str(path), "--backbone", str(TINY), "--limit", "6",
                                   "--heads", f"control={out / 'best'}", "--config-for", f"control={HYBRID}",
                                   *extra]) == 0
        return json.loads(path.read_text())

    random_arm = scored("--random-init")
    assert random_arm["random_init"] is True and random_arm["backbone_sha256"] == meta["backbone_sha256"]
    assert list(random_arm["heads"]) == ["control"]  # the pipeline's own heads belong to another backbone
    row = random_arm["heads"]["control"]
    assert random_arm["sentences"] == 6 and row["words_per_s"] > 0
    assert all(0.0 <= row[m] <= 100.0 for m in ("UPOS", "XPOS", "Lemma", "UAS", "LAS"))
    pretrained = scored()
    assert pretrained["random_init"] is False and pretrained["backbone_sha256"] != meta["backbone_sha256"]
