"""``stoicheia_parser``: Dozat-Manning biaffine dependency parser on encoder word vectors.

Each sentence of a Doc is parsed on its own (sentences from the Doc's sentence starts
when set, e.g. gold or a senter; else cut after sentence-final punctuation, see
:func:`~stoicheia_spacy.encoder.token_planes.sentence_lengths`). All sentences of a batch go
through one forward of :class:`~stoicheia_spacy.morph.biaffine.BiaffineScorer`;
arcs are decoded with :func:`~stoicheia_spacy.morph.mst.chu_liu_edmonds` (every sentence
one tree with exactly one root), then each word's label is the argmax at its decoded
head. ``token.head``/``token.dep_`` are set (the root is its own head, with its
relation, e.g. ``PRED``); training uses the gold sentences and gold heads. With the
``scheme = "ud"`` setting the decoded AGDT tree of each sentence is rewritten to a Universal
Dependencies tree before it is written (:mod:`stoicheia_spacy.morph.agdt_ud_tree`, from the
words' lemmas, UPOS and FEATS that the morphologizer and lemmatizer wrote; the root's relation
is then ``root``).

``decode`` names the decoder: ``"mst_single_root"`` (the above, the default), or, for a
released tagger-parser checkpoint, ``"research"`` and ``"paper"``
(:mod:`stoicheia_spacy.morph.research_decode`); ``decode`` and ``max_words`` (a longer
sentence is parsed as several trees, so that time stays linear in the document's length)
are the fields of the settings block ``[components.stoicheia_parser.settings]``
(:mod:`stoicheia_spacy.morph.settings`),
the relations are data (``data.json``). Both release decoders parse only the tokens with a Greek
letter (the research *words*), each sentence on its own. ``research`` takes the maximum
spanning tree that lets several words hang on the root: each such word is a root token
of the Doc (its own head, with its relation as ``dep_``), so spaCy's ``doc.sents`` may
show one sentence per root word. ``paper`` keeps that tree in ``token.head`` and stores
the greedy decode the paper's tables scored (each word's argmax head, which need not form
a tree) in ``token._.greedy_head`` (the head's token index; a word on the root points to
itself) and ``token._.greedy_dep``. A token without a Greek letter is attached to the
word before it (else after it) as ``punct``; the research route gives it no head.

A Leiden gap token (:func:`~stoicheia_spacy.tokenizer.is_gap_token`) takes no part in the
tree: the words are decoded without it, and it is attached ``dep`` to the previous word
of its sentence (the next one at its start), so no word has a gap as its head.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.scorer import Scorer
from spacy.tokens import Doc, Token
from spacy.training import Example, validate_examples
from spacy.util import registry
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate

from ..component import HeadPipe
from ..encoder.token_planes import sentence_lengths
from ..errors import CheckpointError
from ..heads import torch_module
from ..tokenizer import _GAP_OPENERS, GAP_DEP, gap_flags, placeholder_head, word_text
from .agdt_ud_tree import convert_tree
from .biaffine import BiaffineScorer
from .conllu import RELEASE_PARSE
from .constrained import log_softmax
from .model import pad_index, sentence_index
from .mst import chu_liu_edmonds
from .research_decode import encodable_tokens, greedy_heads
from .settings import ParserSettings
from .training import gold_sentence_lengths, softmax_xent_rows
from .tree_prior import FILE as TREE_PRIOR_FILE
from .tree_prior import TreePrior

#: The parser's own decoder (``decode`` setting); see the module doc for the others.
PARSER_DECODERS = ParserSettings.OWN_DECODERS
#: Relation of a token without a Greek letter under the release decoders.
PUNCT_DEP = "punct"

for _name in ("greedy_head", "greedy_dep"):
    if not Token.has_extension(_name):
        Token.set_extension(_name, default=None)

DEFAULT_PARSER_MODEL = """
[model]
@architectures = "stoicheia.BiaffineParser.v1"
arc_hidden = 500
label_hidden = 150
dropout = 0.33

[model.tok2vec]
@architectures = "stoicheia.StoicheiaListener.v1"
upstream = "*"
grad_factor = 1.0

[model.tok2vec.pooling]
@architectures = "stoicheia.WordPooler.v1"
"""


@registry.scorers("stoicheia.parser_scorer.v1")
def make_parser_scorer() -> Any:
    """UAS/LAS (``dep_uas``, ``dep_las``, ``dep_las_per_type``) and sentence boundaries."""
    return score_parse


def score_parse(examples: Iterable[Example], **kwargs: Any) -> dict[str, Any]:
    """spaCy's dependency scores, punctuation included (as CoNLL 2018)."""
    examples = list(examples)
    scores = Scorer.score_deps(examples, "dep", getter=lambda t, a: getattr(t, a),
                               head_attr="head", head_getter=lambda t, a: getattr(t, a),
                               ignore_labels=(), **kwargs)
    scores.update(Scorer.score_spans(examples, "sents", **kwargs))
    return scores


@Language.factory(
    "stoicheia_parser",
    assigns=["token.head", "token.dep", "token.is_sent_start", "doc.sents"],
    # the tags are read by the tree prior (its settings), UPOS, FEATS and lemmas by the ud scheme's conversion
    requires=["doc._.stoicheia", "token.tag", "token.pos", "token.morph", "token.lemma"],
    default_config={"model": Config().from_str(DEFAULT_PARSER_MODEL)["model"], "settings": {"@misc": "stoicheia.ParserSettings.v1"},
                    "scorer": {"@scorers": "stoicheia.parser_scorer.v1"}},
    default_score_weights={"dep_uas": 0.5, "dep_las": 0.5, "dep_las_per_type": None, "sents_p": None,
                           "sents_r": None, "sents_f": 0.0},
)
def make_stoicheia_parser(nlp: Language, name: str, model: Model, settings: ParserSettings,
                          scorer: Any) -> StoicheiaParser:
    """Create the biaffine parser (relations collected at ``initialize``); ``settings``: the
    ``[components.stoicheia_parser.settings]`` block."""
    return StoicheiaParser(nlp.vocab, model, name, settings=settings, scorer=scorer).bind(nlp)


class StoicheiaParser(HeadPipe):
    """Biaffine arcs + labels, MST-decoded per sentence (see the module doc)."""

    settings: ParserSettings

    def __init__(self, vocab: Vocab, model: Model, name: str = "stoicheia_parser", *,
                 settings: ParserSettings | None = None, scorer: Any = score_parse, **options: Any) -> None:
        base = settings if settings is not None else ParserSettings()
        super().__init__(vocab, model, name, settings=base.replace(**options) if options else base, labels=[])
        self.scorer = scorer
        #: the tree prior (``tree_prior.npz`` of the parser's folder; None: none)
        self.tree_prior: TreePrior | None = None

    @property
    def decode_mode(self) -> str:
        """The decoder (the ``decode`` setting)."""
        return self.settings.decode

    @property
    def labels(self) -> tuple[str, ...]:
        """The dependency relations (AGDT labels in the treebank DocBins)."""
        return tuple(self.data["labels"])

    def make_module(self, n_in: int) -> torch.nn.Module:
        head = self._head_node()
        return BiaffineScorer(n_in, max(len(self.data["labels"]), 1), arc_hidden=head.attrs["arc_hidden"],
                              label_hidden=head.attrs["label_hidden"], dropout=head.attrs["dropout"])

    def init_labels(self, examples: list[Example]) -> None:
        self.data["labels"] = sorted({tok.dep_ for eg in examples for tok in eg.reference if tok.dep_})

    # ------------------------------------------------------------ the tree prior
    def set_tree_prior(self, prior: TreePrior | None) -> None:
        """Use ``prior`` (counted over this parser's relations) with the settings' weights."""
        if prior is not None and self.labels and list(prior.labels) != list(self.labels):
            raise CheckpointError(f"{self.name}: the tree prior was counted over other relations "
                                  f"({len(prior.labels)}) than the parser's ({len(self.labels)})")
        self.tree_prior = prior

    def model_to_disk(self, folder: Path) -> None:
        super().model_to_disk(folder)
        if self.tree_prior is not None:
            self.tree_prior.to_disk(folder / TREE_PRIOR_FILE)

    def model_from_disk(self, folder: Path) -> None:
        super().model_from_disk(folder)
        path = folder / TREE_PRIOR_FILE
        self.set_tree_prior(TreePrior.from_disk(path) if path.is_file() else None)

    def parts_to_bytes(self) -> dict[str, Any]:
        parts = super().parts_to_bytes()
        if self.tree_prior is not None:
            parts["tree_prior"] = self.tree_prior.to_bytes()
        return parts

    def parts_from_bytes(self, msg: Mapping[str, Any]) -> None:
        super().parts_from_bytes(msg)
        self.set_tree_prior(TreePrior.from_bytes(msg["tree_prior"]) if msg.get("tree_prior") else None)

    def _prior_weights(self, doc: Doc) -> tuple[float, float]:
        """The (arc, relation) weights of the tree prior for ``doc``; (0, 0) without a prior or
        without a tag in the Doc."""
        if self.tree_prior is None:
            return 0.0, 0.0
        alpha, beta = self.settings.tree_prior_weights(doc)
        if (alpha or beta) and not doc.has_annotation("TAG"):
            return 0.0, 0.0
        return alpha, beta

    # ------------------------------------------------------------ inference
    def sentences(self, doc: Doc) -> list[int]:
        """Token counts of the trees of ``doc``: its sentences, those longer than the
        ``max_words`` setting cut into near-equal pieces (see the settings)."""
        return capped_lengths(sentence_lengths(doc), self.settings.max_words)

    def predict(self, docs: Iterable[Doc]) -> list[Any]:
        """Per Doc: absolute head index and label id of every token (one tree per sentence);
        the release decoders add the greedy heads and labels (see the module doc)."""
        docs = list(docs)
        if self.decode_mode in ("research", "paper"):
            return self.release_predict(docs)
        sents = [self.sentences(d) for d in docs]
        gaps = [_gap_flags(d) for d in docs]
        if not any(len(d) for d in docs):
            return [(np.zeros(0, np.int64), np.zeros(0, np.int64)) for _ in docs]
        vectors = [self.model.ops.to_numpy(v) for v in self.model.get_ref("tok2vec").predict(docs)]
        module: Any = torch_module(self._head_node())
        module.eval()
        weights = [self._prior_weights(d) for d in docs]
        tags = [[t.tag_ for t in d] if any(w) else [] for d, w in zip(docs, weights, strict=True)]
        lemmas = [[t.lemma_ for t in d] if any(w) else [] for d, w in zip(docs, weights, strict=True)]
        prior = self.tree_prior
        out = [(np.zeros(len(d), np.int64), np.zeros(len(d), np.int64)) for d in docs]
        for block in length_blocks(sentence_index(sents)):
            padded, mask = pad_index(vectors, block, max(n for _, _, n in block))
            with torch.no_grad():
                arcs, label_dep, label_head = module.arcs(torch.from_numpy(padded), torch.from_numpy(mask))
                logp = log_softmax(arcs.numpy().astype(np.float64))
                heads = np.zeros(arcs.shape[:2], dtype=np.int64)
                for s, (i, start, n) in enumerate(block):
                    scores = logp[s, : n + 1, : n + 1]
                    if weights[i][0] and prior is not None:
                        scores = scores + weights[i][0] * prior.arc_scores(tags[i][start : start + n],
                                                                           lemmas[i][start : start + n])
                    heads[s, 1 : n + 1] = _tree_without_gaps(scores, gaps[i][start : start + n])
                # labels of the real words only, as one row (not of every padded position)
                rows = np.concatenate([np.arange(1, n + 1) + s * arcs.shape[1] for s, (_, _, n) in enumerate(block)])
                flat_heads = (heads + np.arange(len(heads))[:, None] * arcs.shape[1]).reshape(-1)[rows]
                label_scores = module.labels(label_dep.flatten(0, 1)[torch.from_numpy(rows)][None],
                                             label_head.flatten(0, 1)[None], torch.from_numpy(flat_heads)[None]
                                             ).numpy()[0]
            if prior is not None and any(weights[i][1] for i, _, _ in block):
                label_scores = log_softmax(label_scores.astype(np.float64))
                first = 0
                for s, (i, start, n) in enumerate(block):
                    if weights[i][1]:
                        label_scores[first : first + n] += weights[i][1] * prior.label_scores(
                            tags[i][start : start + n], heads[s, 1 : n + 1], lemmas[i][start : start + n])
                    first += n
            labels = label_scores.argmax(-1)
            first = 0
            for s, (i, start, n) in enumerate(block):
                rel = heads[s, 1 : n + 1]
                out[i][0][start : start + n] = np.where(rel == 0, np.arange(start, start + n), start + rel - 1)
                out[i][1][start : start + n] = labels[first : first + n]
                first += n
        return out

    def release_predict(self, docs: list[Doc]) -> list[Any]:
        """The ``research``/``paper`` decoders: per Doc (heads, label ids, greedy heads,
        greedy label ids), -1 labels for tokens without a Greek letter (``punct``)."""
        out = [tuple(np.zeros(len(d), np.int64) for _ in range(4)) for d in docs]
        if not any(len(d) for d in docs):
            return out
        vectors = [self.model.ops.to_numpy(v) for v in self.model.get_ref("tok2vec").predict(docs)]
        # each sentence's words: the tokens with a Greek letter
        sents: list[tuple[int, np.ndarray]] = []
        for i, doc in enumerate(docs):
            words = encodable_tokens(doc)
            start = 0
            for n in self.sentences(doc):
                idx = np.arange(start, start + n)[words[start:start + n]]
                if len(idx):
                    sents.append((i, idx))
                start += n
        for i, doc in enumerate(docs):
            heads, labels, g_heads, g_labels = out[i]
            heads[:] = np.arange(len(doc))
            labels[:] = -1
            g_heads[:] = heads
            g_labels[:] = -1
        if sents:
            self._release_trees(vectors, sents, out)
        for i, doc in enumerate(docs):
            words = encodable_tokens(doc)
            start = 0
            for n in self.sentences(doc):
                span = np.arange(start, start + n)
                anchors = span[words[start:start + n]]
                for t in span[~words[start:start + n]]:
                    before = anchors[anchors < t]
                    anchor = before[-1] if len(before) else (anchors[0] if len(anchors) else span[0])
                    for which in (0, 2):
                        out[i][which][t] = anchor
                start += n
        return out

    def _release_trees(self, vectors: list[np.ndarray], sents: list[tuple[int, np.ndarray]], out: list[Any]) -> None:
        """Fill ``out`` (see :meth:`release_predict`) for the words of ``sents`` (doc index,
        token indices): the tree with several root words and the greedy heads, with labels."""
        n_max = max(len(idx) for _, idx in sents)
        padded = np.zeros((len(sents), n_max, vectors[0].shape[1]), dtype=np.float32)
        mask = np.zeros((len(sents), n_max), dtype=bool)
        for s, (i, idx) in enumerate(sents):
            padded[s, : len(idx)] = vectors[i][idx]
            mask[s, : len(idx)] = True
        module: Any = torch_module(self._head_node())
        module.eval()
        with torch.no_grad():
            arcs, label_dep, label_head = module.arcs(torch.from_numpy(padded), torch.from_numpy(mask))
            arc_np = arcs.numpy().astype(np.float64)
            for s, (i, idx) in enumerate(sents):
                n = len(idx)
                scores = arc_np[s, 1 : n + 1, : n + 1]  # (n, n + 1): [dep, head], column 0 = root
                matrix = np.full((n + 1, n + 1), -np.inf)
                matrix[1:] = scores
                mst = chu_liu_edmonds(matrix, single_root=False)
                greedy = greedy_heads(scores)
                for which, chosen in ((0, mst), (2, greedy)):
                    full = np.zeros((1, n_max + 1), dtype=np.int64)
                    full[0, 1 : n + 1] = chosen
                    lab = module.labels(label_dep[s : s + 1], label_head[s : s + 1], torch.from_numpy(full))
                    lab_ids = lab[0, 1 : n + 1].argmax(-1).numpy()
                    heads, labels = out[i][which], out[i][which + 1]
                    heads[idx] = np.where(chosen == 0, idx, idx[np.maximum(chosen, 1) - 1])
                    labels[idx] = lab_ids

    def set_annotations(self, docs: Iterable[Doc], scores: Sequence[Any]) -> None:
        """Write heads and relations (and so sentence boundaries) with one ``from_array`` per Doc
        (and, under the ``paper``/``research`` decoders, the greedy heads)."""
        labels = (*(self.labels or ("dep",)), PUNCT_DEP)
        hashes = np.array([self.vocab.strings.add(lab) for lab in labels], dtype=np.uint64)
        for doc, decoded in zip(docs, scores, strict=True):
            if not len(doc):
                continue
            heads, label_ids = decoded[0], decoded[1]
            if len(decoded) == 4:
                doc.user_data[RELEASE_PARSE] = {"decode": self.decode_mode, "sentences": self.sentences(doc)}
                for tok, g_head, g_label in zip(doc, decoded[2], decoded[3], strict=True):
                    tok._.greedy_head = int(g_head)
                    tok._.greedy_dep = labels[int(g_label)]
            rel = (heads - np.arange(len(doc))).astype(np.int64).astype(np.uint64)
            arr = np.stack([rel, hashes[label_ids]], axis=1)
            doc.from_array([HEAD, DEP], cast(Any, arr))
            if self.settings.scheme == "ud" and len(decoded) == 2:
                self._write_ud(doc)
            for i, gap in enumerate(_gap_flags(doc)):
                if gap:
                    doc[i].dep_ = GAP_DEP

    def _write_ud(self, doc: Doc) -> None:
        """Rewrite the AGDT trees just written to UD (``scheme = "ud"``), sentence by sentence,
        from the words' relations, heads, lemmas (the form when there is none), UPOS and FEATS."""
        heads = np.arange(len(doc), dtype=np.int64)
        deps: list[str] = [""] * len(doc)
        for sent in doc.sents:
            toks = list(sent)
            ud_heads, ud_rels = convert_tree(
                [0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in toks], [t.dep_ for t in toks],
                [t.lemma_ or word_text(t) for t in toks], [t.pos_ or "X" for t in toks], [str(t.morph) for t in toks])
            for t, h, r in zip(toks, ud_heads, ud_rels, strict=True):
                heads[t.i] = t.i if h == 0 else sent.start + h - 1
                deps[t.i] = r
        rel = (heads - np.arange(len(doc))).astype(np.uint64)
        hashes = np.array([self.vocab.strings.add(d) for d in deps], dtype=np.uint64)
        doc.from_array([HEAD, DEP], cast(Any, np.stack([rel, hashes], axis=1)))

    # ------------------------------------------------------------- training
    def _gold(self, examples: Sequence[Example]) -> tuple[list[list[int]], list[np.ndarray], list[np.ndarray]]:
        """Gold sentence lengths per Doc, and per sentence heads (n+1,) and label ids (n+1,)."""
        label_id = {lab: i for i, lab in enumerate(self.labels)}
        all_lengths, heads_out, labels_out = [], [], []
        for eg in examples:
            lengths = gold_sentence_lengths(eg)
            heads, deps = eg.get_aligned_parse(projectivize=False)
            start = 0
            for n in lengths:
                h = np.full(n + 1, -1, dtype=np.int64)
                lab = np.full(n + 1, -1, dtype=np.int64)
                for j in range(n):
                    tok_head = heads[start + j]
                    if tok_head is None:
                        continue
                    if tok_head == start + j:
                        h[j + 1] = 0
                    elif start <= tok_head < start + n:
                        h[j + 1] = tok_head - start + 1
                    else:
                        continue
                    lab[j + 1] = label_id.get(deps[start + j] or "", -1)
                heads_out.append(h)
                labels_out.append(lab)
                start += n
            all_lengths.append(lengths)
        return all_lengths, heads_out, labels_out

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optimizer | None = None,
               losses: dict[str, float] | None = None) -> dict[str, float]:
        """One step on the arc and label cross-entropies of the gold sentences (gold heads for labels)."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "StoicheiaParser.update")
        if not any(len(eg.predicted) for eg in examples):
            return losses
        set_dropout_rate(self.model, drop)
        lengths, heads, labels = self._gold(examples)
        docs = [eg.predicted for eg in examples]
        (arcs, label_scores), backprop = self.model.begin_update((docs, lengths, heads))
        loss, d_arcs, d_labels = self.get_loss_arrays(np.asarray(arcs), np.asarray(label_scores), heads, labels)
        backprop((self.model.ops.asarray(cast(Any, d_arcs)), self.model.ops.asarray(cast(Any, d_labels))))
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    @staticmethod
    def get_loss_arrays(arcs: np.ndarray, label_scores: np.ndarray, heads: Sequence[np.ndarray],
                        labels: Sequence[np.ndarray]) -> tuple[float, np.ndarray, np.ndarray]:
        """Mean (over words with gold) arc + label cross-entropy and its gradients."""
        gold_h = np.full(arcs.shape[:2], -1, dtype=np.int64)
        gold_l = np.full(label_scores.shape[:2], -1, dtype=np.int64)
        for s, (h, lab) in enumerate(zip(heads, labels, strict=True)):
            gold_h[s, : len(h)] = h
            gold_l[s, : len(lab)] = lab
        gold_h[:, 0] = -1
        gold_l[:, 0] = -1
        arc_loss, d_arcs, n_arcs = softmax_xent_rows(arcs.astype(np.float64), gold_h)
        lab_loss, d_labels, _ = softmax_xent_rows(label_scores.astype(np.float64), gold_l)
        n = max(n_arcs, 1)
        return (arc_loss + lab_loss) / n, (d_arcs / n).astype(np.float32), (d_labels / n).astype(np.float32)

    def get_loss(self, examples: Iterable[Example], scores: Any) -> tuple[float, Any]:
        """Loss of ``scores = (arcs, label scores)`` computed against ``examples``' gold."""
        _, heads, labels = self._gold(list(examples))
        loss, d_arcs, d_labels = self.get_loss_arrays(np.asarray(scores[0]), np.asarray(scores[1]), heads, labels)
        return loss, (d_arcs, d_labels)


#: Padded words (sentences x the block's longest) per forward of :meth:`StoicheiaParser.predict`.
PARSE_BLOCK_WORDS = 512


def length_blocks(index: Sequence[tuple[int, int, int]],
                  budget: int = PARSE_BLOCK_WORDS) -> list[list[tuple[int, int, int]]]:
    """The sentences of ``index`` (:func:`~.model.sentence_index`) shortest first, cut into
    blocks of at most ``budget`` padded words (at least one sentence each): each block is padded
    to its own longest sentence, so a batch of short sentences and one long one does not pay
    the long one's square for every sentence. A sentence's scores depend on it alone (the
    padding is masked), so any blocking gives the same trees."""
    blocks: list[list[tuple[int, int, int]]] = []
    block: list[tuple[int, int, int]] = []
    for entry in sorted(index, key=lambda e: e[2]):
        if block and (len(block) + 1) * entry[2] > budget:
            blocks.append(block)
            block = []
        block.append(entry)
    if block:
        blocks.append(block)
    return blocks


def capped_lengths(lengths: Sequence[int], max_words: int) -> list[int]:
    """``lengths`` with every length over ``max_words`` split into the fewest near-equal
    pieces of at most ``max_words`` (the longer pieces first)."""
    out: list[int] = []
    for n in lengths:
        pieces = -(-n // max_words)
        base, extra = divmod(n, pieces)
        out.extend([base + 1] * extra + [base] * (pieces - extra))
    return out


def _gap_flags(doc: Doc) -> list[bool]:
    """:func:`~stoicheia_spacy.tokenizer.gap_flags`, without a Token per word when the text has
    no character a gap token starts with (most texts)."""
    text = doc.text
    if not any(ch in text for ch in _GAP_OPENERS):
        return [False] * len(doc)
    return gap_flags(doc)


def _tree_without_gaps(scores: np.ndarray, gaps: Sequence[bool]) -> np.ndarray:
    """Heads (1-based, 0 = root) of one sentence's ``(n+1, n+1)`` arc scores, decoded over
    its non-gap words only; each gap is then attached to its placeholder head."""
    n = len(gaps)
    if not any(gaps):
        return chu_liu_edmonds(scores.copy())
    words = [j for j in range(n) if not gaps[j]]
    heads = np.zeros(n, dtype=np.int64)
    if words:
        keep = np.array([0, *[j + 1 for j in words]])
        sub = chu_liu_edmonds(scores[np.ix_(keep, keep)].copy())
        for j, h in zip(words, sub, strict=True):
            heads[j] = 0 if h == 0 else words[h - 1] + 1
    for j in range(n):
        if gaps[j]:
            heads[j] = placeholder_head(j, 0, n, gaps) + 1 if words else (0 if j == 0 else 1)
    return heads

