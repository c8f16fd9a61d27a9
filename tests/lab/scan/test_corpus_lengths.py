"""The corpus count table: dichronon lengths decided by the scanned syllable weight only."""

from stoicheia_lab.scan.corpus_lengths import count_lengths, line_lengths
from stoicheia_lab.scan.silver import ScannedLine, read_hypotactic_tsv

# Iliad 1.2 and Odyssey 1.2 with their scansions (οὐλομέ|νην ἣ | μῡρί᾽ Ἀ|χαιοῖς | ἄλγε᾽ ἔ|θηκε;
# πλάγχθη ἐ|πεὶ Τροί|ης ἱερ|ὸν πτολί|εθρον ἔ|περσεν)
ILIAD_1_2 = ScannedLine("οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε,", "HLLHHHLLHHHLLHH", "hexameter", "iliad1")
ODYSSEY_1_2 = ScannedLine("πλάγχθη, ἐπεὶ Τροίης ἱερὸν πτολίεθρον ἔπερσεν·", "HLLHHHLLHLLHLLHH", "hexameter",
                          "odyssey1")


def test_the_weight_of_an_open_syllable_decides_the_length() -> None:
    # μῡ- is heavy in an open syllable: long; Ἀ- light before χ: short; the elided -ί before Ἀχαιοῖς
    # is before a vowel (and scans light): not counted
    assert line_lengths(ILIAD_1_2) == [("μυρί", 1, 1), ("ἀχαιοῖσ", 0, 0)]


def test_a_light_dichronon_before_a_vowel_is_not_counted_as_short() -> None:
    # πτολί-εθρον: the ι is light before ε (a long vowel could be correpted there): no count;
    # πλάγχθη's α is closed by position and ἱ- is light before ε: neither is counted
    assert line_lengths(ODYSSEY_1_2) == []
    # a syllable count the syllabifier cannot match (synizesis of Πηληϊάδεω): the line is skipped
    iliad_1_1 = ScannedLine("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος", "HLLHLLHHHLLHLLHH", "hexameter", "iliad1")
    assert line_lengths(iliad_1_1) is None


def test_count_table_is_flat_per_position_and_sums_the_lines() -> None:
    table, stats = count_lengths([ILIAD_1_2, ILIAD_1_2, ODYSSEY_1_2])
    assert table == {"μυρί": [1, 2, 0], "ἀχαιοῖσ": [0, 0, 2]}
    assert stats == {"lines": 3, "labelled": 3, "counted": 4, "forms": 2}


def test_iliad_book_one_from_the_mirror(shared_data) -> None:
    lines = [x for x in read_hypotactic_tsv(shared_data / "scansion" / "hypotactic_tsv.tar.xz")
             if x.source == "iliad1"]
    table, stats = count_lengths(lines)
    assert stats["lines"] == len(lines) > 600 and stats["labelled"] > 0.9 * stats["lines"]
    # Ἀχαιοί's first α is short wherever it is counted, and it is counted many times
    assert table["ἀχαιῶν"][:3] == [0, 0, table["ἀχαιῶν"][2]] and table["ἀχαιῶν"][2] >= 10
    # θεά's final ᾱ (open, before a consonant or at a heavy position) scans long, never short
    long, short = table["θεά"][1:3]
    assert table["θεά"][0] == 2 and long >= 5 and short == 0
    assert all(k == k.lower() and "ς" not in k for k in table)
