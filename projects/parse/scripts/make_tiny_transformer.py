"""Build a tiny BERT with its own WordPiece vocabulary, offline, for the subword-encoder arm in CI.

The WordPiece tokenizer is trained (``tokenizers``) on the Greek sentences of a DocBin
(accents and case kept); the BERT weights are random. Both are saved with
``save_pretrained`` so ``spacy-transformers.TransformerModel.v3`` loads ``OUT`` like a hub
name. Real runs point ``paths.transformer`` at a pretrained Greek model (GreBERTa,
PhilBERTa) instead.

    python scripts/make_tiny_transformer.py OUT [--data corpus/fold0/train.spacy]
        [--n-sents 2000] [--vocab-size 2000] [--hidden 64] [--layers 2] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import BertTokenizerFast

SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def greek_sentences(data: Path, n: int) -> list[str]:
    """Texts of the first ``n`` sentences of a DocBin."""
    import spacy
    from spacy.tokens import DocBin

    vocab = spacy.blank("grc").vocab
    texts: list[str] = []
    for doc in DocBin().from_disk(data).get_docs(vocab):
        texts += [s.text for s in doc.sents]
        if len(texts) >= n:
            break
    return texts[:n]


def train_wordpiece(texts: list[str], vocab_size: int) -> BertTokenizerFast:
    """A cased, accent-keeping WordPiece tokenizer trained on ``texts``."""
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import BertTokenizerFast

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFC()])
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL)))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.decoder = decoders.WordPiece()
    return BertTokenizerFast(tokenizer_object=tok, do_lower_case=False, strip_accents=False,
                             tokenize_chinese_chars=False, model_max_length=512)


def make_tiny_transformer(out: Path, texts: list[str], *, vocab_size: int = 2000, hidden: int = 64,
                          layers: int = 2, heads: int = 2, seed: int = 0) -> Path:
    """Save a random tiny BERT + a WordPiece tokenizer trained on ``texts`` under ``out``."""
    import torch
    from transformers import BertConfig, BertModel

    tokenizer = train_wordpiece(texts, vocab_size)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=heads, intermediate_size=4 * hidden, max_position_embeddings=512,
                        pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(seed)
    model = BertModel(config)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    (out / "tiny_meta.json").write_text(json.dumps(
        {"sentences": len(texts), "vocab": len(tokenizer), "hidden": hidden, "layers": layers, "seed": seed},
        indent=1))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--data", type=Path, default=Path("corpus/fold0/train.spacy"))
    ap.add_argument("--n-sents", type=int, default=2000)
    ap.add_argument("--vocab-size", type=int, default=2000)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    texts = greek_sentences(args.data, args.n_sents)
    make_tiny_transformer(args.out, texts, vocab_size=args.vocab_size, hidden=args.hidden,
                          layers=args.layers, seed=args.seed)
    print(f"tiny BERT ({args.layers} layers, hidden {args.hidden}) trained on {len(texts)} sentences -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
