"""Annotated Docs as plain JSON-able records, and back (DocBin, CoNLL-U through ``conllu``).

Engines never move Docs between processes: a worker turns each Doc into an *annotation
record* (columns of token attributes plus the document-level extensions) and every writer
works from these records, so the local and the Ray engine write the same bytes.

Record keys: ``id``, ``text`` (the input text), ``words`` and ``spaces`` always; ``tags``,
``pos``, ``morphs``, ``lemmas``, ``norms``, ``macronized``, ``heads`` (absolute token index),
``deps`` and ``sent_starts`` when a component set them; ``restorations`` (each a
:class:`~stoicheia_spacy.restore.results.Restoration` as its ``to_dict()``), ``restored``,
``accent_text`` and ``verses`` when present; ``meta`` holds the input record's other fields.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from sys import intern
from typing import Any

from conllu.models import Metadata, TokenList
from conllu.models import Token as ConlluToken
from spacy.tokens import Doc, Token
from spacy.vocab import Vocab

from ..morph.conllu import spacing_misc
from ..records import plain
from ..restore.results import Restoration

#: Document-level extensions copied into the record when a component set them.
DOC_EXTENSIONS = ("restorations", "restored", "accent_text")


def _ext(doc: Doc, name: str) -> Any:
    return doc._.get(name) if Doc.has_extension(name) else None


def doc_to_record(doc: Doc, doc_id: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The annotation record of one Doc (see the module docstring)."""
    toks = list(doc)
    out: dict[str, Any] = {"id": doc_id, "text": doc.text, "words": [intern(t.text) for t in toks],
                           "spaces": [bool(t.whitespace_) for t in toks]}
    if doc.has_annotation("TAG"):
        out["tags"] = [intern(t.tag_) for t in toks]
    if doc.has_annotation("POS"):
        out["pos"] = [intern(t.pos_) for t in toks]
    if doc.has_annotation("MORPH"):
        out["morphs"] = [intern(str(t.morph)) for t in toks]
    if doc.has_annotation("LEMMA"):
        out["lemmas"] = [intern(t.lemma_) for t in toks]
    if doc.has_annotation("NORM"):
        out["norms"] = [intern(t.norm_) for t in toks]
    if doc.has_annotation("DEP"):
        out["heads"] = [t.head.i for t in toks]
        out["deps"] = [intern(t.dep_) for t in toks]
    if doc.has_annotation("SENT_START"):
        out["sent_starts"] = [bool(t.is_sent_start) for t in toks]
    if toks and doc.has_extension("macronized") and _macronized(doc):
        out["macronized"] = [t._.macronized for t in toks]
    for name in DOC_EXTENSIONS:
        value = _ext(doc, name)
        if value:
            out[name] = plain(value)  # typed records (doc._.restorations) as their to_dict()
    verses = _ext(doc, "verses")
    if verses:
        out["verses"] = [{"start": v.start, "end": v.end, "scansion": plain(v._.scansion), "meter": plain(v._.meter)}
                         for v in verses]
    if meta:
        out["meta"] = meta
    return out


def _macronized(doc: Doc) -> bool:
    return Token.has_extension("macronized") and any(t._.macronized != t.text for t in doc)


def merge_records(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One record from the records of consecutive pieces of one text (token indices, character
    offsets and rendered texts shifted and joined); a key missing from a piece is dropped."""
    if len(parts) == 1:
        return dict(parts[0])
    out: dict[str, Any] = {"id": parts[0]["id"], "text": "".join(p["text"] for p in parts)}
    columns = ("words", "spaces", "tags", "pos", "morphs", "lemmas", "norms", "deps", "sent_starts", "macronized")
    for key in columns:
        if all(key in p for p in parts):
            out[key] = [v for p in parts for v in p[key]]
    tok_off = char_off = 0
    heads: list[int] = []
    restorations: list[dict[str, Any]] = []
    verses: list[dict[str, Any]] = []
    for p in parts:
        heads.extend(h + tok_off for h in p.get("heads", []))
        restorations.extend({**r, "start": r["start"] + char_off, "end": r["end"] + char_off}
                            for r in p.get("restorations", []))
        verses.extend({**v, "start": v["start"] + tok_off, "end": v["end"] + tok_off} for v in p.get("verses", []))
        tok_off += len(p["words"])
        char_off += len(p["text"])
    if all("heads" in p for p in parts):
        out["heads"] = heads
    if restorations:
        out["restorations"] = restorations
    for key in ("restored", "accent_text"):
        if all(key in p for p in parts):
            out[key] = "".join(_keep_trailing_space(p[key], p["text"]) for p in parts)
    if verses:
        out["verses"] = verses
    if "meta" in parts[0]:
        out["meta"] = parts[0]["meta"]
    return out


def _keep_trailing_space(rendered: str, source: str) -> str:
    tail = source[len(source.rstrip()):]
    return rendered if not tail or rendered.endswith(tail) else rendered.rstrip() + tail


def record_to_doc(record: dict[str, Any], vocab: Vocab) -> Doc:
    """A Doc with the record's token annotation; id, meta and document-level values go to
    ``doc.user_data`` (``doc._.NAME`` keys where an extension of that name is registered)."""
    words = record["words"]
    doc = Doc(vocab, words=words, spaces=record["spaces"], tags=record.get("tags"), pos=record.get("pos"),
              morphs=record.get("morphs"), lemmas=record.get("lemmas"), heads=record.get("heads"),
              deps=record.get("deps"), sent_starts=None if "heads" in record else record.get("sent_starts"))
    for tok, norm in zip(doc, record.get("norms", []), strict=False):
        tok.norm_ = norm
    user_data: dict[Any, Any] = doc.user_data
    user_data["id"] = record["id"]
    if "meta" in record:
        user_data["meta"] = record["meta"]
    for name in (*DOC_EXTENSIONS, "verses"):
        if name in record:
            value = record[name]
            if name == "restorations":  # the restorer's typed records again
                value = [Restoration.from_dict(r) for r in value]
            user_data[("._.", name, None, None)] = value
    return doc


def record_to_conllu(record: dict[str, Any]) -> str:
    """CoNLL-U text of a record (one block per sentence, ``# newdoc id``), serialised by ``conllu``.
    Whitespace tokens (a line break between verses) are no words: the word before one gets
    UD's ``SpacesAfter`` (``\\n``) and heads are numbered over the words."""
    words, n = record["words"], len(record["words"])
    starts = record.get("sent_starts") or [True] + [False] * max(n - 1, 0)
    bounds = [i for i in range(n) if i == 0 or starts[i]] + [n]
    heads = record.get("heads")
    blocks: list[str] = []
    for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=True), 1):
        meta = Metadata()
        if k == 1:
            meta["newdoc id"] = record["id"]
        meta["sent_id"] = f"{record['id']}-{k}"
        text = "".join(w + (" " if s else "") for w, s in zip(words[a:b], record["spaces"][a:b], strict=True))
        meta["text"] = " ".join(text.split("\n")).strip()
        kept = [i for i in range(a, b) if words[i].strip()]
        number = {i: j for j, i in enumerate(kept, 1)}
        tokens = TokenList([ConlluToken(_conllu_token(record, i, number, heads, nxt))
                            for i, nxt in zip(kept, [*kept[1:], None], strict=True)], metadata=meta)
        blocks.append(tokens.serialize())
    return "".join(blocks)


def _conllu_token(record: dict[str, Any], i: int, number: dict[int, int], heads: Sequence[int] | None,
                  nxt: int | None) -> dict[str, Any]:
    """The CoNLL-U word of token ``i``; ``number``: the sentence's words by token index, ``nxt``:
    the next word's token index (None for the sentence's last word)."""
    def col(key: str) -> str:
        values = record.get(key)
        return values[i] if values and values[i] else "_"

    head: int | str = "_"
    if heads is not None:
        h, steps = heads[i], 0
        while h != i and h not in number and 0 <= h < len(heads) and not record["words"][h].strip() \
                and heads[h] != h and steps < len(heads):
            h, steps = heads[h], steps + 1  # a whitespace token's dependents go to its own head
        head = number.get(h, 0) if h != i else 0
    after = None if nxt is None else "".join(
        record["words"][j] + (" " if record["spaces"][j] else "") for j in range(i + 1, nxt))
    misc = spacing_misc(None if after is None else (" " if record["spaces"][i] else "") + after) or None
    return {"id": number[i], "form": record["words"][i], "lemma": col("lemmas"), "upos": col("pos"),
            "xpos": col("tags"), "feats": col("morphs"), "head": head,
            "deprel": col("deps") if heads is not None else "_", "deps": None, "misc": misc}


def iter_conllu(records: Sequence[dict[str, Any]]) -> Iterator[str]:
    """CoNLL-U blocks of several records, in order."""
    for record in records:
        yield record_to_conllu(record)
