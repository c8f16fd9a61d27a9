"""Registry of the open Greek sources the corpus pipeline reads.

Each entry pins the staged file (path relative to the asset folder, as in the open-data
mirror), its sha256, the upstream repository and commit it was derived from, and its licence.
``kind`` is ``"literary"`` (eligible for pretraining folds) or ``"documentary"`` (papyri,
inscriptions: excluded from every fold's training data and screened out of doc-clean).
"""

from __future__ import annotations

from dataclasses import dataclass

from stoicheia_spacy.errors import CorpusError


@dataclass(frozen=True)
class Source:
    """One mirrored source file and its provenance."""

    name: str
    path: str
    sha256: str
    repo: str
    commit: str
    upstream_path: str
    license: str
    kind: str  # "literary" | "documentary" | "metadata"
    #: True when the staged file is a conversion of the upstream files (JSONL/TSV/xz), so the
    #: upstream URL gives the raw material and only the mirror gives the exact staged bytes.
    derived: bool = True

    @property
    def url(self) -> str:
        """Public URL: a raw file for verbatim copies, else the repository archive at the commit."""
        if self.derived:
            return f"https://github.com/{self.repo}/archive/{self.commit}.tar.gz"
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{self.upstream_path}"


SOURCES: dict[str, Source] = {
    s.name: s
    for s in [
        Source(
            "perseus", "text/perseus_cltk_grc.jsonl.xz",
            "d6a9cb05d3926d0236f28f4fa26a7c8af1fd58edd0d85017203299323b7beefe",
            "cltk/greek_text_perseus", "4b8fff2efef5b5e60c7ea22a4f3bda6514ea01d8",
            "cltk_json", "CC BY-SA 3.0 US", "literary",
        ),
        Source(
            "tesserae", "text/tesserae_grc_texts.tar.xz",
            "c25fe22831310b85877395b34f8b94b1a4c89d70e3da900c21820b948d2da756",
            "cltk/greek_text_tesserae", "8c8df69e2d56d31b22569a3472ebdde6e6a3a54b",
            "texts", "UB Public License 1.0", "literary",
        ),
        Source(
            "first1k", "text/first1k_opp_from_LemmatizedAncientGreekXML.jsonl.xz",
            "929472fc3a7b58eb660033a674d2dc44e1e227a1a87be8aae82d629ae3cff55d",
            "gcelano/LemmatizedAncientGreekXML", "c1f83343f869e9fab2647c2c1c3fe5618ca80a88",
            "texts", "CC BY-NC 4.0 (derived from First1KGreek, CC BY-SA 4.0)", "literary",
        ),
        Source(
            "glaux", "text/glaux_text_with_metadata.jsonl.xz",
            "a59027ccf56c57d7246ce9b7dfd0b52f76dde894003cf0ef5f587218b9e0dbb8",
            "alekkeersmaekers/glaux", "7266decf66ca8f7a710bb01bba0ffeaffaf6704b",
            "xml", "CC BY-SA 4.0 overall; per-text SOURCE_LICENSE recorded per record", "literary",
        ),
        Source(
            "glaux_metadata", "text/glaux_metadata.txt",
            "ab416263a2fe760c6fecb4bb0cd3244d535929db364fbb543c393c09ca2c06fa",
            "alekkeersmaekers/glaux", "7266decf66ca8f7a710bb01bba0ffeaffaf6704b",
            "metadata.txt", "CC BY-SA 4.0", "metadata", derived=False,
        ),
        Source(
            "ddbdp", "papyri/duke_nlp_2018_ddbdp_tokens.tsv.xz",
            "edd7f5af0f2f0c925b182f579c7b167daec3e4d71b4cb2d10fac67142e358cba",
            "alekkeersmaekers/duke-nlp", "818c96227f4d52541fa58ade468331788ea47238",
            "xml", "CC BY-SA 4.0 (text: DDbDP, CC BY 3.0)", "documentary",
        ),
        Source(
            "padoc", "papyri/padoc/padoc389.csv.xz",
            "b1168485e9cf5b658345fe3d9116149bb0322db767683fd094c5a7a8b40d3d4d",
            "ipavlopoulos/padoc", "23cd8ef7875a1bf6e8be2d4d9f883b8fe6cfbbf1",
            "data/padoc389.csv", "CC BY 4.0 (README) / Apache-2.0 (LICENSE)", "documentary",
        ),
        Source(
            "padoc_wild", "papyri/padoc/in_the_wild.csv.xz",
            "e7ef482607c688063a87845ff8ee00722c735361a7b41fb0856742771ddb6acf",
            "ipavlopoulos/padoc", "23cd8ef7875a1bf6e8be2d4d9f883b8fe6cfbbf1",
            "data/in_the_wild.csv", "CC BY 4.0 (README) / Apache-2.0 (LICENSE)", "documentary",
        ),
        Source(
            "papygreek", "treebanks/papygreek_treebanks_xml.tar.xz",
            "b4442851d90172775ab7a095cbac0efa51482e168a851367ee21d417a9f8d605",
            "papygreek/papygreek-treebanks", "0e5139b06e41d89275f3a1ace4ee0dc5513f2f7d",
            "documentary", "CC BY-SA 4.0", "documentary",
        ),
        Source(
            "hunspell_forms", "lexica/grc_hunspell_wordforms.txt.xz",
            "0345f83e5450e46293869290f5bbb96c7c788c29f632cb7d7a0d705ee501e1ca",
            "mrakia/hunspell-ancient-greek", "504b3f8f37838c151e342108ff5b1bcf5813c7da",
            "grc_GR.dic", "GPL-3.0", "metadata",
        ),
    ]
}

LITERARY = tuple(n for n, s in SOURCES.items() if s.kind == "literary")
DOCUMENTARY = tuple(n for n, s in SOURCES.items() if s.kind == "documentary")


def get_source(name: str) -> Source:
    """The registered source called ``name``; raises CorpusError listing the known names."""
    try:
        return SOURCES[name]
    except KeyError:
        raise CorpusError(f"unknown source {name!r}; known: {', '.join(SOURCES)}") from None
