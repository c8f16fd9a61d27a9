"""Metre automata: shipped files, compiler vs Python's re, and real scansions."""

from __future__ import annotations

import itertools
import json
import lzma
import tarfile
from pathlib import Path

import numpy as np
import pytest

from stoicheia_spacy.errors import ConfigError
from stoicheia_spacy.scan.meters import (
    Meter,
    compile_pattern,
    default_meter_dirs,
    load_meters,
    meter_from_dict,
)

EXPECTED = {
    "dactylic_hexameter",
    "elegiac_pentameter",
    "iambic_trimeter",
    "iambic_trimeter_resolved",
    "choliamb",
    "trochaic_tetrameter_catalectic",
    "anapaestic_tetrameter_catalectic",
}


@pytest.fixture(scope="module")
def meters() -> dict[str, Meter]:
    return load_meters()


def all_strings(n: int) -> np.ndarray:
    """Every weight string of length n as an (2**n, n) array (0 heavy, 1 light)."""
    return (np.arange(2**n)[:, None] >> np.arange(n - 1, -1, -1)) & 1


def test_shipped_meters_are_all_there(meters: dict[str, Meter]) -> None:
    assert set(meters) == EXPECTED


def test_file_examples_accepted_and_negatives_rejected(meters: dict[str, Meter]) -> None:
    for meter in meters.values():
        assert meter.examples, meter.name
        for example in meter.examples:
            assert meter.accepts(example["weights"]), (meter.name, example)
        for example in meter.negative_examples:
            assert not meter.accepts(example["weights"]), (meter.name, example)


def test_iliad_1_1(meters: dict[str, Meter]) -> None:
    # μῆ-νιν ἄ | ει-δε θε | ὰ Πη | λη-ϊ-ά | δεω Ἀ-χι | λῆ-ος (synizesis of -εω)
    hexameter = meters["dactylic_hexameter"]
    assert hexameter.accepts("HLLHLLHHHLLHLLHH")
    assert hexameter.accepts("HLLHLLHHHLLHLLHL")  # final anceps
    # without synizesis -δε-ω gives an extra syllable: no longer a hexameter
    assert not hexameter.accepts("HLLHLLHHHLLLLLLHH")
    assert not meters["elegiac_pentameter"].accepts("HLLHLLHHHLLHLLHH")


def test_trimeter_strict_vs_resolved(meters: dict[str, Meter]) -> None:
    orestes_2 = "HLLLHHHLHLHLH"  # οὐδὲ πάθος οὐδὲ ξυμφορὰ θεήλατος: tribrach
    assert meters["iambic_trimeter_resolved"].accepts(orestes_2)
    assert not meters["iambic_trimeter"].accepts(orestes_2)
    medea_1 = "HHLHHHLHHHLH"  # Εἴθ᾽ ὤφελ᾽ Ἀργοῦς μὴ διαπτάσθαι σκάφος
    assert meters["iambic_trimeter"].accepts(medea_1)
    assert not meters["choliamb"].accepts(medea_1)
    assert meters["choliamb"].accepts(medea_1[:-2] + "HH")


def edits(weights: str) -> set[str]:
    """Every string at edit distance <= 1 from ``weights`` (flips, insertions, deletions)."""
    out = {weights}
    for i in range(len(weights) + 1):
        for c in "HL":
            out.add(weights[:i] + c + weights[i:])
        if i < len(weights):
            out.add(weights[:i] + weights[i + 1 :])
            out.add(weights[:i] + ("L" if weights[i] == "H" else "H") + weights[i + 1 :])
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_dfa_equals_python_regex(meters: dict[str, Meter], name: str) -> None:
    meter = meters[name]
    regex = meter.regex
    for n in range(1, 14):  # exhaustive on short strings
        strings = all_strings(n)
        chars = np.array(list("HL"))[strings]
        expected = np.array([regex.fullmatch(s) is not None for s in map("".join, chars)])
        assert (meter.accepts_batch(strings) == expected).all(), (name, n)
    # near the accepted lines: all strings within two edits of every example
    near = set().union(*(edits(e) for ex in meter.examples for e in edits(ex["weights"])))
    assert len(near) > 100
    for weights in near:
        assert meter.accepts(weights) == (regex.fullmatch(weights) is not None), (name, weights)


@pytest.mark.parametrize(
    "pattern",
    ["H(L|LL)*H", "(HL){2,3}X?", "X+L{2,}", "H|L", "((H|L)L?){1,2}"],
)
def test_compiler_matches_regex_for_operators(pattern: str) -> None:
    meter = meter_from_dict({"name": "t", "pattern": pattern})
    for n in range(1, 9):
        strings = all_strings(n)
        chars = np.array(list("HL"))[strings]
        expected = [meter.regex.fullmatch("".join(r)) is not None for r in chars]
        assert meter.accepts_batch(strings).tolist() == expected, (pattern, n)


def test_minimal_dfa_size() -> None:
    trans, accepting = compile_pattern("(XHLH){2} XHLX")
    assert trans.shape == (13, 2)  # one state per position of a fixed 12-syllable line
    assert accepting.sum() == 1


@pytest.mark.parametrize("pattern", ["", "H(", "HQ", "H{3,1}", "H||L", "(HL"])
def test_bad_patterns_raise(pattern: str) -> None:
    with pytest.raises(ConfigError):
        compile_pattern(pattern)


def test_user_file_overrides_and_extends(tmp_path: Path, meters: dict[str, Meter]) -> None:
    (tmp_path / "glyconic.json").write_text(
        json.dumps({"name": "glyconic", "pattern": "XX HLLH LH"}), encoding="utf-8"
    )
    (tmp_path / "hex.json").write_text(
        json.dumps({"name": "dactylic_hexameter", "pattern": "(HLL){5}HX"}), encoding="utf-8"
    )
    loaded = load_meters([*default_meter_dirs(), tmp_path])
    assert set(loaded) == EXPECTED | {"glyconic"}
    assert loaded["glyconic"].accepts("HLHLLHLH")
    assert not loaded["dactylic_hexameter"].accepts("HHHHHHHHHHHH")  # overridden


def test_bad_files_raise(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_meters([tmp_path])
    with pytest.raises(ConfigError):
        load_meters([tmp_path / "missing"])
    with pytest.raises(ConfigError):
        meter_from_dict({"pattern": "HL"})
    assert load_meters([]) == {}
    with pytest.raises(ConfigError):
        meter_from_dict({"name": "x", "pattern": "HL"}).accepts("HXL")


def test_exhaustive_small_pattern_agrees_with_itertools() -> None:
    meter = meter_from_dict({"name": "t", "pattern": "(LLH|HH|HLL){2}(LLH|HH)X"})
    accepted = {
        "".join(p)
        for n in range(5, 11)
        for p in itertools.product("HL", repeat=n)
        if meter.accepts("".join(p))
    }
    assert "HHHHHHH" in accepted and "LLHLLHLLHL" in accepted
    assert "HLLHLLHLLH" not in accepted  # dactyl in the last full foot


def test_hypotactic_lines_scan(meters: dict[str, Meter], shared_data: Path) -> None:
    """Real Hypotactic scansions (Iliad 1, tragic trimeters of Aeschylus' Persians)."""
    archive = shared_data / "scansion" / "hypotactic_tsv.tar.xz"
    wanted = {
        "tsv/iliad1.tsv": "dactylic_hexameter",
        "tsv/persians.tsv": "iambic_trimeter_resolved",
    }
    labels = {"dactylic hexameter", "iambic trimeter (tragic)"}
    counts: dict[str, list[int]] = {}
    with lzma.open(archive) as raw, tarfile.open(fileobj=raw, mode="r|") as tar:
        for member in tar:
            name = member.name.removeprefix("./")
            if name not in wanted:
                continue
            handle = tar.extractfile(member)
            assert handle is not None
            for line in handle.read().decode("utf-8").splitlines():
                parts = line.split("\t")
                if len(parts) < 3 or parts[2] not in labels:
                    continue
                weights = parts[1].replace(" ", "").replace("-", "H").replace("u", "L")
                tally = counts.setdefault(wanted[name], [0, 0])
                tally[0] += meters[wanted[name]].accepts(weights)
                tally[1] += 1
    assert counts["dactylic_hexameter"][1] > 500
    assert counts["dactylic_hexameter"][0] == counts["dactylic_hexameter"][1]
    assert counts["iambic_trimeter_resolved"][1] > 300
    assert counts["iambic_trimeter_resolved"][0] == counts["iambic_trimeter_resolved"][1]
