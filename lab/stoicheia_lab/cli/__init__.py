"""The lab's ``stoicheia`` sub-commands (``bench``, ``corpus``), registered through the ``stoicheia_spacy.commands`` entry points."""
