"""The bidirectional modified Kneser-Ney LM and the n-gram's own restorations, on real Greek."""

from __future__ import annotations

import numpy as np
import pytest

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import CheckpointError
from stoicheia_spacy.leiden import parse_gaps
from stoicheia_spacy.restore import build_queries
from stoicheia_spacy.restore.kn_beam import kn_restore
from stoicheia_spacy.restore.kneser_ney import (
    N_PREDICT,
    SPACE,
    UNK,
    build_kn,
    kn_digest,
    load_kn,
    save_kn,
)
from tests.conftest import TINY

# documentary formulae of sale and receipt (BGU 1.100 and its kin), as the papyri write them
PAPYRI = [
    "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν "
    "δευτερόβολον πυρρὰν κεχαραγμένον δεξιῷ σιαγόνι ταύτην τοιαύτην ἀναπόριφον καὶ ἀπέχω τὴν "
    "συνπεφωνημένην τιμὴν ἀργυρίου δραχμὰς ἑπτακοσίας ὀγδοήκοντα καὶ βεβαιώσω πάσῃ βεβαιώσει.",
    "Ἀπολλώνιος Ἡρακλείδου Σαραπίωνι χαίρειν. ὁμολογῶ πεπρακέναι σοι ὄνον θήλειαν λευκὴν καὶ ἀπέχω "
    "τὴν τιμὴν ἀργυρίου δραχμὰς ἑκατὸν καὶ βεβαιώσω πάσῃ βεβαιώσει. ἔρρωσο.",
    "Διονύσιος Πτολεμαίου Ἀμμωνίῳ χαίρειν. ὁμολογῶ πεπρακέναι σοι τὸν ὑπάρχοντά μοι δοῦλον καὶ "
    "ἀπέχω παρὰ σοῦ τὴν συνπεφωνημένην τιμὴν ἀργυρίου δραχμὰς τριακοσίας. ἔρρωσο.",
    "Ἡρακλείδης Ὥρου τῷ φιλτάτῳ χαίρειν. ὁμολογῶ ἀπέχειν παρὰ σοῦ τὰς τοῦ φόρου δραχμὰς ὀκτακοσίας "
    "καὶ οὐδὲν ἐνκαλῶ. ἔρρωσο. ἔτους δευτέρου καὶ εἰκοστοῦ Ἀντωνίνου Καίσαρος τοῦ κυρίου.",
]


def symbols(text: str) -> np.ndarray:
    p = encode_planes(text)
    return np.insert(p.letters.astype(np.int64), np.flatnonzero(p.boundary > 0) + 1, SPACE)


@pytest.fixture(scope="module")
def lm():
    return build_kn([symbols(t) for t in PAPYRI * 3], order=8)


def test_distributions_sum_to_one_both_directions(lm):
    seq = symbols(PAPYRI[0])
    positions = np.arange(0, len(seq), 7)
    for reverse in (False, True):
        ctx = lm.contexts(seq, positions, reverse=reverse)
        probs = np.exp(lm.next_logprobs(ctx, reverse=reverse))
        assert probs.shape == (len(positions), N_PREDICT)
        np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-6)
    # an unseen context and one cut by an unknown letter are distributions too
    odd = np.array([[UNK] * 7, [3, 5, 1, 0, 22, 9, 13], [4, UNK, 1, 1, 1, 1, 1]])
    np.testing.assert_allclose(np.exp(lm.next_logprobs(odd, reverse=True)).sum(1), 1.0, atol=1e-6)


def test_pruned_model_stays_normalised():
    pruned = build_kn([symbols(t) for t in PAPYRI * 3], order=8, min_counts=[1, 1, 1, 1, 2, 3, 3, 4])
    full = build_kn([symbols(t) for t in PAPYRI * 3], order=8)
    assert sum(pruned.sizes()) < sum(full.sizes())
    seq = symbols(PAPYRI[1])
    for reverse in (False, True):
        ctx = pruned.contexts(seq, np.arange(len(seq)), reverse=reverse)
        np.testing.assert_allclose(np.exp(pruned.next_logprobs(ctx, reverse=reverse)).sum(1), 1.0, atol=1e-6)
    with pytest.raises(ValueError):
        build_kn([seq], order=3, min_counts=[2, 1, 1])


def test_directions_agree_on_a_sequence():
    seqs = [symbols(t) for t in PAPYRI * 40]  # a unigram model is exact, a bigram one with many counts near it
    seq = symbols(PAPYRI[2])
    uni = build_kn(seqs, order=1)
    fwd, rev = uni.sequence_logprob([seq], [0]), uni.sequence_logprob([seq], [0], reverse=True)
    np.testing.assert_allclose(fwd, rev, rtol=1e-9)
    bi = build_kn(seqs, order=2)
    fwd, rev = bi.sequence_logprob([seq], [0]), bi.sequence_logprob([seq], [0], reverse=True)
    np.testing.assert_allclose(fwd, rev, rtol=0.02)
    assert fwd[0] > uni.sequence_logprob([seq], [0])[0]  # and the bigram knows more


def test_save_load_memory_mapped(lm, tmp_path):
    path = tmp_path / "kn.npz"
    save_kn(lm, path)
    back = load_kn(path, sha256=kn_digest(lm))
    assert isinstance(back.keys[-1], np.memmap)
    assert back.keys[7].dtype == np.uint64 and back.keys[2].dtype == np.uint32
    ctx = lm.contexts(symbols(PAPYRI[3]), np.arange(20))
    np.testing.assert_allclose(back.next_logprobs(ctx), lm.next_logprobs(ctx))
    with pytest.raises(CheckpointError):
        load_kn(path, sha256="0" * 64)
    with pytest.raises(CheckpointError):
        load_kn(tmp_path / "missing.npz")


def test_restores_a_sale_formula(lm):
    [target] = build_queries(parse_gaps("Ἀπίων Ὥρου χαίρειν. ὁμολογῶ πεπρα[.5] σοι κάμηλον θήλειαν"))
    [cands] = kn_restore(lm, [target.query], beam=20)
    texts = [c.text for c in cands]
    assert "κεναι" in texts[:3]
    assert all(len(t) == 5 for t in texts)
    # the gap counted in letters: its candidates hold exactly that many letters
    [free] = kn_restore(lm, [target.query.__class__(**{**target.query.__dict__, "letters": 5})])
    assert free and all(len(c.text.replace(" ", "")) == 5 for c in free)


def test_the_restorer_decodes_with_the_ngram_and_skips_the_backbone(lm, tmp_path):

    import torch

    from stoicheia_spacy.assembly import build_pipeline
    from stoicheia_spacy.errors import ConfigError

    torch.set_num_threads(1)
    path = tmp_path / "kn.npz"
    save_kn(lm, path)
    nlp = build_pipeline(str(TINY))
    pipe = nlp.add_pipe("stoicheia_restorer", config={"settings": {
        "beam_width": 4, "n_candidates": 5, "kn_lm": str(path), "kn_lm_sha256": kn_digest(lm),
        "kn_weights": {"default": [0.0, 1.0, 1.0, 0.0]}}})
    text = "Ἀπίων Ὥρου χαίρειν. ὁμολογῶ πεπρα[.5] σοι κάμηλον θήλειαν"
    [item] = nlp(text)._.restorations
    assert item.candidates[0].text == "κεναι"
    assert pipe.forwards == 0  # no bucket weighs the backbone: its beam is not run
    assert 0.0 < item.confidence <= 1.0
    pipe.configure(kn_weights={"default": [0.3, 1.0, 1.0, 0.0]})
    [item] = nlp(text)._.restorations
    assert pipe.forwards > 0 and "κεναι" in [c.text for c in item.candidates]
    with pytest.raises(ConfigError):
        pipe.configure(kn_weights={"default": [1.0, 1.0]})
