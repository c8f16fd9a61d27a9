"""The pipeline tests run torch on one thread (two cores are shared with the rest of the suite);
the tiny-checkpoint fixtures live in ``tests/conftest.py``."""

import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture()
def tiny_nlp(tiny_model_config, tiny_checkpoint):  # type: ignore[no-untyped-def]
    """Build blank grc + stoicheia_encoder holding the golden tiny checkpoint (initialized)
    + the named components (``configs``: their configs)."""
    import spacy

    def build(*components: str, configs: dict | None = None, initialize: bool = True) -> spacy.Language:
        nlp = spacy.blank("grc")
        nlp.add_pipe("stoicheia_encoder", config={"model": dict(tiny_model_config)})
        nlp.config["initialize"]["components"]["stoicheia_encoder"] = {
            "loader": {"@misc": "stoicheia.BackboneLoader.v1", "source": str(tiny_checkpoint)}}
        for name in components:
            nlp.add_pipe(name, config=(configs or {}).get(name, {}))
        if initialize:
            nlp.initialize()
        return nlp

    return build
