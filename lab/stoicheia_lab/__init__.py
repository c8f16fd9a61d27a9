"""stoicheia-lab: the benchmarks, corpus building, treebank conversion, scoring, baselines and
evaluation code of stoicheia-spacy. Installed beside the runtime package (``make install``), never
by ``pip install .``; it registers ``stoicheia bench`` and ``stoicheia corpus``."""

__version__ = "0.1.0"
