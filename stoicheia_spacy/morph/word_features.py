"""``stoicheia.WordFeatures.v1``: backbone word vectors plus embeddings of the word form.

The frozen backbone's pooled vectors carry context; spaCy's ``MultiHashEmbed`` (hashed
NORM, PREFIX, SUFFIX, SHAPE) carries the identity of the form itself, which a lexical task
(tags memorised per form, lemma edit scripts) learns cheaply on CPU. Both are concatenated
per word and mixed back to ``width`` by a Maxout layer, so a head reading them keeps the
shape it had with the listener alone.
"""

from __future__ import annotations

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Maxout, Model, chain, concatenate, with_array
from thinc.types import Floats2d


@registry.architectures("stoicheia.WordFeatures.v1")
def build_word_features(
    tok2vec: Model[list[Doc], list[Floats2d]],
    embed: Model[list[Doc], list[Floats2d]],
    width: int,
    maxout_pieces: int = 3,
) -> Model[list[Doc], list[Floats2d]]:
    """``tok2vec`` (e.g. ``stoicheia.StoicheiaListener.v1``) and ``embed`` (e.g.
    ``spacy.MultiHashEmbed.v2``) concatenated per word, then Maxout to ``width``."""
    mix: Model[list[Floats2d], list[Floats2d]] = with_array(Maxout(nO=width, nP=maxout_pieces, normalize=True, dropout=0.0))
    model: Model[list[Doc], list[Floats2d]] = chain(concatenate(tok2vec, embed), mix)
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("embed", embed)
    return model
