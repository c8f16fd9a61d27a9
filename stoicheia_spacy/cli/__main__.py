"""``python -m stoicheia_spacy.cli``."""

from stoicheia_spacy.cli import main

if __name__ == "__main__":
    main()
