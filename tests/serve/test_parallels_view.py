"""Each candidate's attested parallels expand in the web page and in the HTML view, with
papyri.info links and the editors' supplements flagged."""

from __future__ import annotations

import pytest
import spacy

from stoicheia_spacy.accent.lexasset import find_parallels
from stoicheia_spacy.errors import ParallelsIndexError
from stoicheia_spacy.restore.render import parallels_html
from stoicheia_spacy.restore.results import Candidate, Parallel, Restoration
from stoicheia_spacy.serve.engine import with_parallels
from stoicheia_spacy.serve.render import _candidates, _passages

TEXT = "χαίρειν. ὁμολογῶ πεπρα[.5] σοι κάμηλον θήλειαν"
PARALLELS = (
    Parallel("bgu.2.416", "ddbdp", "χαιρειν ομο[λ]ογω πεπρακεναι σοι καμηλους", 24, 29, 2, False, True,
             "https://papyri.info/ddbdp/bgu;2;416"),
    Parallel("bgu.2.469", "ddbdp", "ομολογω πεπρακεναι σοι κ[α]μη[λο]ν", 13, 18, 3, True, True,
             "https://papyri.info/ddbdp/bgu;2;469"),
)


def item() -> Restoration:
    start = TEXT.index("[.5]")
    cands = (Candidate("κεναι", -16.5, 0.8, parallels=PARALLELS), Candidate("καμεν", -24.2, 0.2))
    return Restoration(start, start + 4, 0, 5, 5, "lost", cands, 0.8, True, False)


def test_candidate_parallels_expand_with_links() -> None:
    html = _candidates(item(), 1, TEXT)
    assert html.count("<details") == 1 and "2 parallels" in html
    assert 'href="https://papyri.info/ddbdp/bgu;2;416"' in html and "l. 2" in html
    assert "πεπρα<mark>κεναι</mark> σοι" in html
    assert "rests on the editor" in parallels_html(item().candidates[0])
    assert parallels_html(item().candidates[1]) == ""


def test_page_panel_lists_similar_passages_of_other_papyri() -> None:
    """The web page's parallels panel: with the index installed the served pipeline gains the
    opt-in stoicheia_parallels pipe, and the page lists the corpus passages sharing the text's
    letter sequences, linked to papyri.info."""
    try:
        find_parallels()
    except ParallelsIndexError:
        pytest.skip("the parallels index of the lexicon data package is not installed")
    nlp = with_parallels(spacy.blank("grc"))
    assert "stoicheia_parallels" in nlp.pipe_names
    doc = nlp("ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν λευκὴν ἐγβεβλημένην τὴν τιμὴν ἀργυρίου δραχμῶν")
    html = _passages(doc)
    assert 'id="parallels"' in html and "Similar passages" in html
    assert html.count("<li>") == len(doc._.parallels) >= 1
    assert "https://papyri.info/ddbdp/" in html and "<mark>" in html
    assert _passages(spacy.blank("grc")("ὁμολογῶ")) == ""  # no panel where the pipe did not run
