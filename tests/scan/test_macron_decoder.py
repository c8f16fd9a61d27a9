"""The macron decoder's posterior stage: position features, metre margins, old cfgs."""

import unicodedata

import numpy as np
import pytest

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.scan.macron_decoder import (
    MARGIN_CAP,
    POSTERIOR_FEATURES,
    MacronDecoder,
    position_features,
    posterior_features,
)
from stoicheia_spacy.scan.syllabify import dichrona_mask

TEXT = "μυρία ἄλγε θεά"


def _letters(text: str) -> list[str]:
    planes = encode_planes(text)
    return [text[int(o)] for o in np.asarray(planes.offsets)]


def test_position_features_on_real_words() -> None:
    planes = encode_planes(TEXT)
    feats = position_features(planes)
    letters = _letters(TEXT)
    assert feats.shape == (len(letters), 5)
    vowel = [unicodedata.normalize("NFD", c)[0] in "αεηιουω" for c in letters]
    on = {name: [letters[i] for i in np.nonzero(feats[:, j])[0] if vowel[i]]
          for j, name in enumerate(("alpha", "iota", "last", "first", "next_vowel"))}
    assert on["alpha"] == ["α", "ἄ", "ά"]
    assert on["iota"] == ["ί"]
    assert on["last"] == ["α", "ε", "ά"]  # μυρί-α, ἄλγ-ε, θε-ά
    assert on["first"] == ["υ", "ἄ", "ε"]
    assert on["next_vowel"] == ["ί", "ε"]  # ί before α, ε before ά; never across a word end
    assert position_features(encode_planes("")).shape == (0, 5)


def test_old_two_weight_posterior_ignores_the_new_evidence() -> None:
    planes = encode_planes(TEXT)
    dich = dichrona_mask(planes)
    p = np.full(len(planes), 0.3)
    metre = np.where(dich, 1, 0)
    old = MacronDecoder(None, {"backbone": {"posterior": {"weights": [1.0, 2.0], "bias": 0.0}}})
    expected = 1 / (1 + np.exp(-(np.log(0.3 / 0.7) + 2.0)))
    plain = old.posterior(p, metre, dich)
    full = old.posterior(p, metre, dich, margin=np.full(len(p), MARGIN_CAP), planes=planes,
                         verse_metre=np.ones(len(p)))
    assert plain[dich] == pytest.approx(expected) and full[dich] == pytest.approx(expected)
    assert np.array_equal(plain[~dich], p[~dich])


def test_a_forced_metre_weighs_more_than_a_loose_one() -> None:
    planes = encode_planes(TEXT)
    dich = dichrona_mask(planes)
    n = len(planes)
    forced = POSTERIOR_FEATURES.index("metre_forced")
    stage = {"weights": [1.0, 0.5, 3.0], "bias": 0.0, "features": [0, 1, forced]}
    dec = MacronDecoder(None, {"backbone": {"posterior": stage}})
    p, metre = np.full(n, 0.3), np.where(dich, 1, 0)
    loose = dec.posterior(p, metre, dich, margin=np.full(n, 1.5))
    held = dec.posterior(p, metre, dich, margin=np.full(n, 50.0))  # capped: the metre forced it
    assert (held[dich] > 0.9).all() and (loose[dich] < 0.5).all()
    x = posterior_features(p, metre, np.full(n, 50.0))
    assert x.shape == (n, len(POSTERIOR_FEATURES)) and x[dich, forced].tolist() == [1.0] * int(dich.sum())
