"""Write analysis.ipynb (the Jupyter walk-through executed by tests/test_notebook.py)."""

from pathlib import Path

import nbformat as nbf

nb = nbf.v4.new_notebook()
md = nbf.v4.new_markdown_cell
code = nbf.v4.new_code_cell
nb.cells = [
md("# Stoicheia in a notebook\n\nLoads the default pipeline `grc_stoicheia_doc_clean` (built from the embedded backbone when it is not installed), asks the backbone for hidden letters and missing planes of a passage, runs whatever components the pipeline holds (restorer, accentuator, morphosyntax, scanner), and plots per-plane confidence. CI executes this notebook headless, so it never rots."),
code("""import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import spacy
import torch

import stoicheia_spacy as st
from stoicheia_spacy import alphabet as A
from stoicheia_spacy.backbone import planes_to_tensors
from stoicheia_spacy.encoder.model import torch_backbone

torch.set_num_threads(2)
try:
    nlp = spacy.load("grc_stoicheia_doc_clean")
except OSError:
    from stoicheia_spacy.assembly import build_pipeline
    nlp = build_pipeline("embedded:grc_stoicheia_doc_clean")
backbone = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)
nlp.pipe_names"""),
md("## A passage and its planes"),
code("""text = "ἀνδρῶν δ’ ἐπιφανῶν πᾶσα γῆ τάφος, καὶ οὐ στηλῶν μόνον ἐν τῇ οἰκείᾳ σημαίνει ἐπιγραφή."
planes = st.encode_planes(text)
print(len(planes), "letters;", st.decode_planes(planes) == st.canonicalize(text))
planes.letters[:10], planes.diacritics[:10], planes.boundary[:10]"""),
md("## Restoring a lacuna\n\nA Leiden gap `[.3]` is parsed into an insertion point; with the restorer in the pipeline its ranked candidates appear in `doc._.restorations`. The backbone alone already fills masked letters of known width:"),
code("""gapped = st.parse_gaps("ἀνδρῶν δ’ ἐπιφανῶν πᾶσα γῆ [.3]ος, καὶ οὐ στηλῶν μόνον")
gap = gapped.gaps[0]
print(gapped.text, gap)
if "stoicheia_restorer" in nlp.pipe_names:
    doc = nlp("ἀνδρῶν δ’ ἐπιφανῶν πᾶσα γῆ [.3]ος, καὶ οὐ στηλῶν μόνον")
    for r in doc._.restorations:  # typed records: Restoration, its Candidates
        print([c.text for c in r.candidates[:5]], round(r.confidence, 2), r.confident)
else:
    gold = st.encode_planes("ἀνδρῶν δ’ ἐπιφανῶν πᾶσα γῆ τάφος, καὶ οὐ στηλῶν μόνον")
    hidden = gold.with_unknown("diacritics")
    start = len(st.encode_planes(gapped.text[: gap.start]))
    hidden.letters[start : start + 3] = A.MASK_ID
    batch = planes_to_tensors([hidden])
    with torch.inference_mode():
        out = backbone(batch["input_ids"], batch["boundary"], batch["dia"], batch["punct"], seg_id=batch["seg_id"])
    guess = out.char[0, :, : A.N_ALPHA].argmax(-1)
    print("greedy fill:", "".join(A.ALPHABET[int(i)] for i in guess[start : start + 3]))"""),
md("## Accentuation of scriptio continua"),
code("""bare = "ανδρωνδεπιφανωνπασαγηταφος"
if "stoicheia_accentuator" in nlp.pipe_names or type(nlp.tokenizer).__name__ != "Tokenizer":
    doc = nlp(bare)
    print(doc.text, "->", doc._.accent_text)  # the accented, divided text (doc.text stays the input)
else:
    planes = st.encode_planes(bare).with_unknown("diacritics", "boundary", "punctuation")
    batch = planes_to_tensors([planes])
    with torch.inference_mode():
        out = backbone(batch["input_ids"], batch["boundary"], batch["dia"], batch["punct"], seg_id=batch["seg_id"])
    planes.diacritics[:] = out.dia[0].argmax(-1).numpy()
    planes.boundary[:] = out.boundary[0].argmax(-1).numpy()
    planes.punctuation[:] = out.punct[0].argmax(-1).numpy()
    print(st.decode_planes(planes))"""),
md("## Tags, parse and scansion\n\nShown when the morphosyntax and scanner components are in the pipeline."),
code("""doc = nlp("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος")
if "stoicheia_parser" in nlp.pipe_names:
    print([(t.text, t.tag_, t.lemma_, t.dep_, t.head.i) for t in doc])
if "stoicheia_scanner" in nlp.pipe_names:
    print([(t.text, t._.macronized) for t in doc])
print(nlp.pipe_names)"""),
md("## Per-plane confidence\n\nEvery plane but the letters is hidden; the backbone's probability for its best guess on each plane, letter by letter."),
code("""planes = st.encode_planes(text)
hidden = planes.with_unknown("diacritics", "boundary", "punctuation")
batch = planes_to_tensors([hidden])
with torch.inference_mode():
    out = backbone(batch["input_ids"], batch["boundary"], batch["dia"], batch["punct"], seg_id=batch["seg_id"])
conf = {name: torch.softmax(getattr(out, name)[0].float(), -1).max(-1).values.numpy()
        for name in ("dia", "boundary", "punct", "cap")}
fig, ax = plt.subplots(figsize=(12, 3))
for name, values in conf.items():
    ax.plot(values, label=name)
ax.set_xticks(range(len(planes)))
ax.set_xticklabels([text[int(o)] for o in planes.offsets], fontsize=7)
ax.set_ylabel("confidence")
ax.legend(ncol=4)
fig.tight_layout()
{name: round(float(v.mean()), 3) for name, v in conf.items()}"""),
md("## Date, genre and dialect\n\n`stoicheia_attributor` (beside the default pipeline, not in it: it calls the Odyssey lyric) reads the text's character n-grams and `stoicheia_dater` the words of the text (no second forward): `doc._.date` is a distribution over 25-year bins with a 90 % interval (the weighted median of the most similar PaDoC papyri), `doc._.genre` / `doc._.dialect` calibrated label probabilities (fitted on GLAUx). `stoicheia_spacy.date.render` draws the same as HTML/SVG."),
code("""from stoicheia_spacy.assembly import assemble, attributor_config, default_config, extend
from stoicheia_spacy.date.render import render_date_html

dating = assemble(default_config(), only=["stoicheia_encoder", "stoicheia_dater"])
extend(dating, attributor_config())
papyrus = "Ἀρίστων Ζήνωνι χαίρειν. τῆι η τοῦ Μεχεὶρ ἤρξατο Ἀμμώνιος τὰς ὠνὰς ἐπικηρύσσειν. ἔρρωσο. ἔτους η, Μεχεὶρ θ."
doc = dating(papyrus)
estimate = doc._.date
starts, probs = zip(*estimate.histogram, strict=True)
fig, ax = plt.subplots(figsize=(8, 3))
ax.bar(starts, probs, width=25, align="edge", alpha=0.7, label="doc._.date")
ax.axvspan(estimate.low, estimate.high, color="orange", alpha=0.2, label=f"{estimate.level:.0%} interval")
ax.axvline(estimate.mean, color="k", label=estimate.estimator)
ax.set_xlabel("year (negative: BCE)")
ax.set_ylabel("probability")
ax.legend()
fig.tight_layout()
print("interval:", estimate)
homer = dating("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην, ἣ μυρί’ Ἀχαιοῖς ἄλγε’ ἔθηκε")
print("genre:", homer._.genre, "dialect:", homer._.dialect)
print("Homer:", homer._.date)  # literature: the dater says it does not apply
html = render_date_html(doc, page=False)
len(html)"""),
]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbf.write(nb, Path(__file__).with_name("analysis.ipynb"))
