"""Declared contracts: every factory says what it reads and writes, the default pipeline's
``analyze_pipes`` finds nothing missing, and the components whose ``pipe`` is their own send a
failing Doc to the error handler set with ``nlp.set_error_handler``."""

from __future__ import annotations

from typing import Any

import pytest
import spacy
from spacy.language import Language

from stoicheia_spacy.assets import default_model_dir
from stoicheia_spacy.errors import ConfigError

TEXT = "ἔδοξε τῆι βουλῆι [.3] τῶι δήμωι"
#: The components whose ``pipe`` is their own (not TrainablePipe's).
OWN_PIPE = ("stoicheia_restorer", "stoicheia_accentuator", "stoicheia_dater", "stoicheia_attributor")


@pytest.fixture(scope="module")
def default_pipeline() -> Language:
    """The default pipeline's config, assembled without weights (what analyze_pipes reads)."""
    config = spacy.util.load_config(default_model_dir() / "config.cfg", overrides={"paths.base": str(default_model_dir())})
    return spacy.util.load_model_from_config(config, auto_fill=True)


def test_every_factory_declares_what_it_reads(default_pipeline: Language) -> None:
    for name in default_pipeline.pipe_names:
        meta = default_pipeline.get_pipe_meta(name)
        assert meta.assigns, name
        if name != "stoicheia_encoder":  # every other component reads the encoder's forward
            assert "doc._.stoicheia" in meta.requires, (name, meta.requires)
    assert default_pipeline.get_pipe_meta("stoicheia_lemmatizer").requires == ["doc._.stoicheia", "token.tag"]


def test_analyze_pipes_finds_no_problem_in_the_default_pipeline(default_pipeline: Language) -> None:
    analysis = default_pipeline.analyze_pipes(pretty=False)
    assert analysis["problems"] == {name: [] for name in default_pipeline.pipe_names}
    assert analysis["attrs"]["doc._.restorations"]["assigns"] == ["stoicheia_restorer"]
    assert analysis["attrs"]["doc._.stoicheia"]["requires"] == [
        n for n in default_pipeline.pipe_names if n != "stoicheia_encoder"]


def test_analyze_pipes_reports_a_restorer_without_its_encoder() -> None:
    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_restorer")
    assert nlp.analyze_pipes(pretty=False)["problems"] == {"stoicheia_restorer": ["doc._.stoicheia"]}


@pytest.fixture()
def unweighted() -> Language:
    """The four components with nothing before them: the restorer and accentuator find no
    ``doc._.stoicheia``, the dater and attributor no weights, so each raises a ConfigError."""
    nlp = spacy.blank("grc")
    for name in OWN_PIPE:
        nlp.add_pipe(name, config={"lexicon": None} if name == "stoicheia_accentuator" else {})
    return nlp


@pytest.mark.parametrize("name", OWN_PIPE)
def test_a_failing_doc_reaches_the_error_handler_in_nlp_pipe(unweighted: Language, name: str) -> None:
    calls: list[tuple[str, Any, list[str], Exception]] = []

    def handler(proc_name: str, proc: Any, docs: list[Any], error: Exception) -> None:
        calls.append((proc_name, proc, [d.text for d in docs], error))

    with unweighted.select_pipes(enable=[name]):
        with pytest.raises(ConfigError):  # the default handler raises
            list(unweighted.pipe([TEXT]))
        unweighted.set_error_handler(handler)
        assert list(unweighted.pipe([TEXT, TEXT])) == []  # both failed, both handled
    assert calls and all(n == name and proc is unweighted.get_pipe(name) and isinstance(error, ConfigError)
                         for n, proc, _, error in calls)
    assert sum((texts for _, _, texts, _ in calls), []) == [TEXT, TEXT]  # every Doc once (a batch or one by one)
