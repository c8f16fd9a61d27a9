"""Silver data: labels from Hypotactic, and zero leakage of Norma into training lines."""

from stoicheia_lab.scan.norma import normalise_line, read_norma
from stoicheia_lab.scan.silver import (
    HTML_EXCLUDE,
    SCAN_HEAVY_END,
    SCAN_LIGHT_END,
    SCAN_VERSE_END,
    ScannedLine,
    label_line,
    read_hypotactic_html,
    read_hypotactic_tsv,
    screen_against,
    shingles,
)


def test_label_line_il_1_2() -> None:
    lab = label_line(ScannedLine("οὐλομένην, ἣ μυρί’ Ἀχαιοῖς ἄλγε’ ἔθηκε,", "HLLHHHLLHHHLLHH", "hex", "iliad1"))
    assert lab is not None
    ends = lab.scan[lab.scan > 0].tolist()
    assert ends[-1] == SCAN_VERSE_END and len(ends) == 15
    assert ends[:4] == [SCAN_HEAVY_END, SCAN_LIGHT_END, SCAN_LIGHT_END, SCAN_HEAVY_END]
    # μυρί’: ῡ long (heavy open syllable), ί short (light open syllable); Ἀ short
    assert lab.macron[lab.macron >= 0].tolist()[:3] == [1, 0, 0]


def test_no_norma_line_leaks_into_training(shared_data) -> None:
    norma = read_norma(shared_data / "scansion" / "norma_syllabarum_graecarum.tar.xz")
    scansion = shared_data / "scansion"
    lines = list(read_hypotactic_tsv(scansion / "hypotactic_tsv.tar.xz"))
    html = list(read_hypotactic_html(scansion / "hypotactic_htmls_greek_syllables.tar.xz"))
    assert not {x.source + ".html" for x in html} & HTML_EXCLUDE
    kept, dropped = screen_against(lines + html, norma)
    bench = {normalise_line(x.text) for x in [*norma.macron, *norma.syllables]}
    train = {normalise_line(x.text) for x in kept}
    assert not bench & train
    bench_sh = set().union(*(shingles(b) for b in bench))
    assert all(not (shingles(t) & bench_sh) for t in train)
    assert dropped > 0


def test_unscreened_html_would_leak(shared_data) -> None:
    """Regression: dionysiaca1/qsmyrnaeus1 hold Norma text, so the exclusion matters."""
    import tarfile

    norma = read_norma(shared_data / "scansion" / "norma_syllabarum_graecarum.tar.xz")
    first = normalise_line(next(x for x in norma.macron if x.source == "dionysiaca").text)
    with tarfile.open(shared_data / "scansion" / "hypotactic_htmls_greek_syllables.tar.xz") as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("dionysiaca1.html"))
        fh = tar.extractfile(member)
        assert fh is not None
        html = fh.read().decode()
    import re

    plain = normalise_line(re.sub(r"<[^>]+>", "", html))
    assert first[:30] in plain
