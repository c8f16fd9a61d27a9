"""validate_text: the shared input check."""

from __future__ import annotations

import pytest

from stoicheia_spacy.errors import InvalidTextError
from stoicheia_spacy.textcheck import validate_text


@pytest.mark.parametrize("text", ["", "ἔδοξεν τῆι βουλῆι", "\u0301α", "שלום", "Съешь", "a\u200fb"])
def test_accepts_any_script(text: str) -> None:
    validate_text(text)


@pytest.mark.parametrize(
    ("text", "offset", "reason"),
    [("τῶι\x00δήμωι", 3, "NUL"), ("δήμ\udc00ωι", 3, r"surrogate U\+DC00"), ("\ud800", 0, r"U\+D800")],
)
def test_rejects_nul_and_lone_surrogates(text: str, offset: int, reason: str) -> None:
    with pytest.raises(InvalidTextError, match=reason) as info:
        validate_text(text)
    assert info.value.offset == offset  # type: ignore[attr-defined]
    assert f"offset {offset}" in str(info.value)


def test_rejects_non_str() -> None:
    with pytest.raises(InvalidTextError, match="bytes"):
        validate_text(b"abc")
