"""Train the morphologizer, lemmatizer and parser heads on cached backbone features.

Reads the chunks written by ``cache_features.py`` (the frozen backbone is never run here):
each component gets the pooled word vectors of its own scalar mix through its usual
listener (``doc._.stoicheia`` holds, per word with a Greek letter, one "letter" whose every
layer is the cached vector, so the word pooler returns the cached vector and adds its
learned ``empty`` vector to the other words). The heads are the shipped architectures
from the training config (``assets/configs/parse_heads_cached.cfg``), decoded by their
default decoders at evaluation; each keeps its best weights on the cached dev sentences
(morphologizer UPOS + XPOS, lemmatizer Lemma, parser LAS) and training stops on patience
or after ``max_epochs``.

Resumable in legs: every ``checkpoint_every`` steps OUT/checkpoint/ gets the components and
``state.json`` (step, epoch, position, best scores); a rerun with the same arguments
continues from there (Adam's moments restart). ``--max-steps``/``--minutes`` or a file
OUT/STOP end a leg; ``state.json`` counts wall and process CPU seconds over the legs.
OUT/best/<component>/ are folders the shipped pipeline reads with ``from_disk`` (the
layout of ``assets/models/grc_stoicheia_doc_clean/morphosyntax``).

    python scripts/train_cached.py CONFIG CACHE_DIR TRAIN.spacy DEV.spacy OUT
        [--train-split fold0_train] [--dev-split fold0_dev] [--max-steps N] [--minutes M]
        [--train-limit N]

``--train-limit N`` trains on the first N cached sentences only (chunk order, i.e. the
seeded order of ``cache_features.py``): two caches of the same sentences, e.g. the default
backbone's and a random-init one's, then train on exactly the same sample.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HEADS = ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")


def load_cache(split_dir: Path) -> dict[int, dict[str, Any]]:
    """sentence index -> {component: fp16 (n_words, d), "lengths": letters per word}."""
    out: dict[int, dict[str, Any]] = {}
    for path in sorted(split_dir.glob("chunk_*.npz")):
        with np.load(path) as z:  # each item read once (an NpzFile reads the array anew per access)
            arrays = {k: z[k] for k in z.files}
        ends = np.cumsum(arrays["sent_lengths"])
        starts = ends - arrays["sent_lengths"]
        for s, a, b in zip(arrays["sent_index"], starts, ends, strict=True):
            row = {name: arrays[f"feats_{name}"][a:b].copy() for name in HEADS}
            row["lengths"] = arrays["token_lengths"][a:b].copy()
            out[int(s)] = row
    return out


def head_block(config: Any, name: str, width: int) -> dict[str, Any]:
    """Component ``name``'s block of a heads config, without its factory, at the cache's ``width``
    (the BiLSTM's and the form-embedding mix's, which must equal the cached vectors')."""
    block = copy.deepcopy(dict(config["components"][name]))  # the config itself stays as read
    block.pop("factory")
    tok2vec = block.get("model", {}).get("tok2vec", {})
    if "encode" in tok2vec:
        tok2vec["encode"]["width"] = width
    for sub in (tok2vec, tok2vec.get("embed", {})):
        if sub.get("@architectures") == "stoicheia.WordFeatures.v1":
            sub["width"] = width
    return block


def fake_data(feats: np.ndarray, lengths: np.ndarray, n_layers: int) -> Any:
    """Encoder output that makes the word pooler return ``feats`` (see the module doc)."""
    from stoicheia_spacy.encoder.types import StoicheiaDocData

    has = lengths > 0
    vec = np.asarray(feats[has], dtype=np.float32)
    hidden = np.broadcast_to(vec[None], (n_layers, *vec.shape))
    return StoicheiaDocData(planes=None, letter_token=np.flatnonzero(has).astype(np.int64),  # type: ignore[arg-type]
                            token_lengths=has.astype(np.int64), hidden=hidden)


def set_features(docs: list[Any], rows: list[dict[str, Any]], name: str, n_layers: int) -> None:
    for doc, row in zip(docs, rows, strict=True):
        doc._.stoicheia = fake_data(row[name], row["lengths"], n_layers)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config", type=Path)
    ap.add_argument("cache", type=Path, help="the cache folder of one key (holds meta.json)")
    ap.add_argument("train", type=Path)
    ap.add_argument("dev", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--train-split", default="fold0_train")
    ap.add_argument("--train-limit", type=int, default=0, help="the first N cached train sentences only (0: all)")
    ap.add_argument("--dev-split", default="fold0_dev")
    ap.add_argument("--max-steps", type=int, default=0, help="end this leg after N steps in all (0: no limit)")
    ap.add_argument("--minutes", type=float, default=0.0, help="end this leg after M minutes (0: no limit)")
    ap.add_argument("--reload-every", type=int, default=0,
                    help="re-read the cache every N steps (a cache still being written grows the data)")
    ap.add_argument("--init-from", type=Path, default=None,
                    help="continue trained heads (folders <component>/ as in morphosyntax/) instead of "
                         "initializing new ones; their labels stay, the lemma lexicon gains the training lemmas")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--overrides", default="{}", help="JSON of [training] overrides")
    args = ap.parse_args(argv)

    import spacy
    import torch
    from spacy.tokens import Doc, DocBin
    from spacy.training import Example
    from stoicheia_lab.scoring.conll import score_conll
    from thinc.api import Adam, Config

    import stoicheia_spacy  # noqa: F401  (registers the factories and architectures)
    from stoicheia_spacy.encoder.types import StoicheiaDocData  # noqa: F401
    from stoicheia_spacy.morph.conllu import span_words

    torch.set_num_threads(args.threads)
    config = Config().from_disk(args.config)
    tcfg = dict(config["training"])
    tcfg.update(json.loads(args.overrides))
    meta = json.loads((args.cache / "meta.json").read_text())
    n_layers = int(meta["n_layers"])
    torch.manual_seed(int(tcfg["seed"]))
    if not Doc.has_extension("stoicheia"):
        Doc.set_extension("stoicheia", default=None)

    t_start = time.perf_counter()
    def train_cache() -> dict[int, dict[str, Any]]:
        rows = load_cache(args.cache / args.train_split)
        return dict(itertools.islice(rows.items(), args.train_limit)) if args.train_limit else rows

    cache = train_cache()
    dev_cache = load_cache(args.cache / args.dev_split)
    if not cache or not dev_cache:
        raise SystemExit(f"no cached sentences under {args.cache} ({args.train_split}, {args.dev_split})")
    width = int(next(iter(cache.values()))[HEADS[0]].shape[1])

    nlp = spacy.blank("grc")
    train_sents = [s.as_doc() for d in DocBin().from_disk(args.train).get_docs(nlp.vocab) for s in d.sents]
    dev_sents = [s.as_doc() for d in DocBin().from_disk(args.dev).get_docs(nlp.vocab) for s in d.sents]

    def example(ref: Doc) -> Example:
        pred = Doc(nlp.vocab, words=[t.text for t in ref], spaces=[bool(t.whitespace_) for t in ref],
                   sent_starts=[True] + [False] * (len(ref) - 1))
        return Example(pred, ref)

    ckpt = args.out / "checkpoint"
    state: dict[str, Any] = {"step": 0, "epoch": 0, "pos": 0, "best": {}, "bad_evals": 0, "evals": [],
                             "seconds": 0.0}
    resumed = (ckpt / "state.json").is_file()
    for name in HEADS:
        nlp.add_pipe(name, config=head_block(config, name, width))
    if resumed:
        state = json.loads((ckpt / "state.json").read_text())
        for name in HEADS:
            nlp.get_pipe(name).from_disk(ckpt / name)
        print(f"resumed at step {state['step']} (epoch {state['epoch']})", flush=True)
    elif args.init_from is not None:
        for name in HEADS:
            nlp.get_pipe(name).from_disk(args.init_from / name)
        if tcfg.get("labels_from_all", True):
            lemmatizer: Any = nlp.get_pipe("stoicheia_lemmatizer")
            lemmas = {t.lemma_ for r in train_sents for t in r if t.lemma_}
            lemmatizer.data["lexicon"] = sorted(set(lemmatizer.data["lexicon"]) | lemmas)
            lemmatizer._lexicon = None
        for name in HEADS:  # the cache must hold what these heads' poolers compute
            for node in nlp.get_pipe(name).model.walk():
                if node.name == "stoicheia_word_pooler" and not np.allclose(
                        np.asarray(node.get_param("mix")), np.asarray(meta["mixes"][name]), atol=1e-6):
                    raise SystemExit(f"{args.cache} was cached with another scalar mix than {args.init_from / name}")
    else:
        label_refs = train_sents if tcfg.get("labels_from_all", True) else [train_sents[i] for i in cache]
        label_examples = [example(r) for r in label_refs]
        first = sorted(cache)[:8]
        sample = [example(train_sents[i]) for i in first]
        for name in HEADS:
            set_features([eg.predicted for eg in sample], [cache[i] for i in first], name, n_layers)
            pipe: Any = nlp.get_pipe(name)
            pipe.init_labels(label_examples)
            tok2vec_model = pipe.model.get_ref("tok2vec")
            tok2vec_model.initialize(X=[eg.predicted for eg in sample])
            pipe.data["n_in"] = int(tok2vec_model.predict([eg.predicted for eg in sample])[0].shape[1])
            pipe._build()
            for node in pipe.model.walk():  # the pooler's mix = the mix the cache was made with
                if node.name == "stoicheia_word_pooler":
                    node.set_param("mix", np.asarray(meta["mixes"][name], dtype=np.float32))
        del label_examples
    mixes = {name: np.asarray(meta["mixes"][name], dtype=np.float32) for name in HEADS}

    dev_ids = sorted(dev_cache)
    dev_refs = [dev_sents[i] for i in dev_ids]
    dev_rows = [dev_cache[i] for i in dev_ids]

    def evaluate() -> dict[str, float]:
        docs = [example(r).predicted for r in dev_refs]
        for name in HEADS:
            pipe: Any = nlp.get_pipe(name)
            set_features(docs, dev_rows, name, n_layers)
            for a in range(0, len(docs), 64):
                batch = docs[a : a + 64]
                pipe.set_annotations(batch, pipe.predict(batch))
        scores = score_conll([span_words(r) for r in dev_refs], [span_words(d) for d in docs])
        return {k: round(100 * v.accuracy, 2) for k, v in scores.items()}

    def criteria(scores: dict[str, float]) -> dict[str, float]:
        return {"stoicheia_morphologizer": scores["UPOS"] + scores["XPOS"],
                "stoicheia_lemmatizer": scores["Lemma"], "stoicheia_parser": scores["LAS"]}

    def save(folder: Path, names: tuple[str, ...] = HEADS) -> None:
        for name in names:
            pipe: Any = nlp.get_pipe(name)
            for node in pipe.model.walk():
                if node.name == "stoicheia_word_pooler":  # a copy: Adam updates params in place
                    node.set_param("mix", mixes[name].copy())
            tmp = folder / f".{name}.tmp"
            if tmp.exists():
                shutil.rmtree(tmp)
            pipe.to_disk(tmp)
            if (folder / name).exists():
                shutil.rmtree(folder / name)
            tmp.rename(folder / name)

    def checkpoint() -> dict[str, Any]:
        """Save the components and the state (with the wall and CPU seconds up to now); returns that state."""
        ckpt.mkdir(parents=True, exist_ok=True)
        save(ckpt)
        state["seconds"] = round(state["seconds"] + time.perf_counter() - leg_t0, 1)
        state["cpu_seconds"] = round(state.get("cpu_seconds", 0.0) + time.process_time() - leg_cpu0, 1)
        (ckpt / ".state.json").write_text(json.dumps(state, indent=1))
        (ckpt / ".state.json").replace(ckpt / "state.json")
        state["seconds"] -= time.perf_counter() - leg_t0  # counted again at the next checkpoint
        saved = json.loads((ckpt / "state.json").read_text())
        state["cpu_seconds"] -= time.process_time() - leg_cpu0
        return saved

    continuing = args.init_from is not None or bool(state.get("continued"))
    state["continued"] = continuing
    optimizer = Adam(float(tcfg["continue_learn_rate" if continuing else "learn_rate"]))
    batch_size = int(tcfg["batch_size"])
    leg_t0 = time.perf_counter()
    leg_cpu0 = 0.0  # process CPU time counts from the start (setup included)
    leg_steps = 0
    best_dir = args.out / "best"
    best_dir.mkdir(parents=True, exist_ok=True)
    print(f"{len(cache)} cached train sentences, {len(dev_ids)} dev; setup {time.perf_counter() - t_start:.0f}s",
          flush=True)
    stop = False
    if state["step"] == 0 and not state["evals"]:
        scores = evaluate()
        state["evals"].append({"step": 0, "epoch": 0, "train_sentences": len(cache), **scores})
        if args.init_from is not None:  # the heads continued are the bar to beat
            state["best"] = criteria(scores)
            save(best_dir)
        print(f"eval step 0: {scores}", flush=True)
    while state["epoch"] < int(tcfg["max_epochs"]) and not stop:
        ids = sorted(cache)
        random.Random(int(tcfg["seed"]) + state["epoch"]).shuffle(ids)
        while state["pos"] < len(ids):
            batch_ids = ids[state["pos"] : state["pos"] + batch_size]
            egs = [example(train_sents[i]) for i in batch_ids]
            losses: dict[str, float] = {}
            for name in HEADS:
                set_features([eg.predicted for eg in egs], [cache[i] for i in batch_ids], name, n_layers)
                nlp.get_pipe(name).update(egs, sgd=optimizer, losses=losses)
            state["pos"] += len(batch_ids)
            state["step"] += 1
            leg_steps += 1
            step = state["step"]
            if step % 20 == 0:
                print(f"step {step} epoch {state['epoch']} pos {state['pos']}/{len(ids)} "
                      + " ".join(f"{k.split('_')[1]}={v:.3f}" for k, v in losses.items()), flush=True)
            if step % int(tcfg["eval_every"]) == 0:
                scores = evaluate()
                crit = criteria(scores)
                improved = [n for n in HEADS if crit[n] > state["best"].get(n, -1.0)]
                for n in improved:
                    state["best"][n] = crit[n]
                save(best_dir, tuple(improved))
                state["bad_evals"] = 0 if improved else state["bad_evals"] + 1
                state["evals"].append({"step": step, "epoch": state["epoch"], "train_sentences": len(ids),
                                       **scores})
                print(f"eval step {step}: {scores} improved={improved}", flush=True)
                if state["bad_evals"] >= int(tcfg["patience"]):
                    stop = True
            if step % int(tcfg["checkpoint_every"]) == 0 or stop:
                checkpoint()
            if args.reload_every and step % args.reload_every == 0:
                cache = train_cache()
            out_of_time = args.minutes and time.perf_counter() - leg_t0 > 60 * args.minutes
            asked = (args.out / "STOP").exists()  # touch OUT/STOP to end the leg cleanly
            if stop or (args.max_steps and step >= args.max_steps) or out_of_time or asked:
                saved = checkpoint()
                (args.out / "train_meta.json").write_text(json.dumps(
                    {"config": str(args.config), "cache": str(args.cache), "cache_meta": meta,
                     "train_sentences_cached": len(cache), "dev_sentences": len(dev_ids), **saved,
                     "training": tcfg}, indent=1, ensure_ascii=False))
                print(f"leg ends at step {step} ({'patience' if stop else 'limit'})", flush=True)
                return 0
        state["epoch"] += 1
        state["pos"] = 0
    saved = checkpoint()
    (args.out / "train_meta.json").write_text(json.dumps(
        {"config": str(args.config), "cache": str(args.cache), "cache_meta": meta,
         "train_sentences_cached": len(cache), "dev_sentences": len(dev_ids), **saved, "training": tcfg},
        indent=1, ensure_ascii=False))
    print(f"done at step {state['step']} (max_epochs)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
