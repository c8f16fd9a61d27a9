# Two commands for a fresh machine (see README):
#   make demo   installs the project, builds and installs the lexicon data package
#               (stoicheia-lexicon-grc, from the data mirror) and grc_stoicheia_doc_clean
#               (assembled by spaCy from assets/models/grc_stoicheia_doc_clean/config.cfg), runs the demo
#   make test   the same set-up, then ruff, mypy and pytest
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
export STOICHEIA_ASSET_MIRROR ?= $(abspath ../shared/data)

.PHONY: install lexicon parallels-index inscription-sources default-package demo test lint typecheck pytest browser clean gpu-data gpu-prep gpu-train gpu-install

$(VENV)/.installed: requirements/lock.txt setup.cfg pyproject.toml lab/setup.cfg
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -r requirements/lock.txt
	# the lock pins the runtime, lab and [dev] dependencies; `pip install .` alone gets the runtime,
	# the lab (benchmarks, corpus, scoring, treebank conversion: lab/) is its own package
	$(PY) -m pip install -q --no-deps --no-build-isolation -e ".[dev]" -e lab
	touch $@

install: $(VENV)/.installed

# The lexicon data package stoicheia-lexicon-grc (GPL-3.0 / CC BY-SA / CC BY data, never inside the MIT
# code package): the accent lexicon (projects/accent formlex), the macron lexicon
# (projects/meter macron-lexicon), the morphosyntax form table (projects/parse build_form_table)
# and the restorer's character 7-gram LM (restore-lm below), built
# from the mirror (~8 CPU minutes) into packages/lexicon and installed; skipped, with a message,
# where there is no mirror.
LEXICON_WHEEL_DIR := packages/lexicon/dist
LEXICON_STAMP := $(VENV)/.lexicon-installed
RESTORE_LM := projects/restore/training/ngram_lm7.npz
RESTORE_KN := projects/restore/training/kn_lm8.npz
PARALLELS := projects/restore/training/parallels
INSC_SOURCES := projects/restore/training/domains/inscription
# the morphosyntax form -> (lemma, XPOS) table (relative to projects/parse): the heads' training fold
# (fold 0 of the converted treebanks, converted here when absent, ~3 CPU minutes) and the DDbDP tokens
FORM_TABLE := training/form_analyses.npz
# the 8-gram's pruning (raw-count threshold per order: 7- and 8-grams seen once dropped, 108 MB instead
# of 185 MB at equal accuracy, projects/restore/RESULTS.md Run 12) and the
# inscription samples left out of it when they exist
KN_MIN_COUNTS := 1,1,1,1,1,1,2,2
KN_SAMPLES := $(if $(wildcard projects/restore/samples/inscriptions/test.jsonl),--samples samples/inscriptions,)

$(LEXICON_STAMP): | $(VENV)/.installed
	@if [ ! -d "$(STOICHEIA_ASSET_MIRROR)/lexica" ]; then \
	  echo "no data mirror at $(STOICHEIA_ASSET_MIRROR): the lexicon data package is not built"; \
	else \
	  set -e; \
	  cd projects/accent && $(abspath $(PY)) scripts/build_formlex.py "$(STOICHEIA_ASSET_MIRROR)" corpus/formlex.npz --literary-limit 400 && cd ../..; \
	  cd projects/meter && $(abspath $(PY)) scripts/build_lexicon.py assets/macron_lexicon.json.gz && cd ../..; \
	  [ -f $(RESTORE_LM) ] && [ -f $(RESTORE_KN) ] || $(MAKE) --no-print-directory restore-lm; \
	  [ -f $(PARALLELS)/docs.json ] || $(MAKE) --no-print-directory parallels-index; \
	  [ -f $(INSC_SOURCES)/vocabulary.npy ] || $(MAKE) --no-print-directory inscription-sources; \
	  cd projects/parse && { [ -f corpus/fold0/train.spacy ] || { $(abspath $(PY)) scripts/extract.py "$(STOICHEIA_ASSET_MIRROR)" assets && \
	    $(abspath $(PY)) scripts/convert.py assets corpus 0 5; }; } && \
	    $(abspath $(PY)) scripts/build_form_table.py "$(STOICHEIA_ASSET_MIRROR)" $(FORM_TABLE) --train corpus/fold0/train.spacy \
	    --stats training/form_analyses.json && cd ../..; \
	  $(PY) projects/accent/scripts/package_lexicon.py "$(STOICHEIA_ASSET_MIRROR)" projects/accent/corpus/formlex.npz packages/lexicon \
	    --macron-lexicon projects/meter/assets/macron_lexicon.json.gz --restore-lm $(RESTORE_LM) --restore-kn $(RESTORE_KN) \
	    --parallels $(PARALLELS) --domain-sources inscription=$(INSC_SOURCES) --form-table projects/parse/$(FORM_TABLE); \
	  $(PY) -m pip install -q --no-deps --force-reinstall $(LEXICON_WHEEL_DIR)/stoicheia_lexicon_grc-*.whl; \
	  touch $@; \
	fi

lexicon: $(LEXICON_STAMP)

# The default pipeline grc_stoicheia_doc_clean, assembled by spaCy from
# assets/models/grc_stoicheia_doc_clean/config.cfg and pip-installed, for the tests: every README
# and docs/*.md example that uses it runs in tests/test_docs.py. With the lexicon data package when
# `make lexicon` built it, else with lexicon = null (said aloud), as for the demo.
DEFAULT_STAMP := $(VENV)/.doc-clean-installed

# rebuilt whenever the model folder or the package code changes (a package built by older code may not load)
DEFAULT_DEPS := $(shell find assets/models/grc_stoicheia_doc_clean stoicheia_spacy -type f ! -name "*.pyc" 2>/dev/null)

$(DEFAULT_STAMP): $(DEFAULT_DEPS) | $(VENV)/.installed lexicon
	@if $(PY) -c "import stoicheia_lexicon_grc" 2>/dev/null; then flag=; else flag=--no-lexicon; fi; \
	  set -e; rm -rf packages/grc_stoicheia_doc_clean-*; \
	  $(PY) -m stoicheia_spacy.cli package embedded:grc_stoicheia_doc_clean --name doc_clean --output packages --force $$flag; \
	  $(PY) -m pip install -q --no-deps --force-reinstall packages/grc_stoicheia_doc_clean-*/dist/grc_stoicheia_doc_clean-*.tar.gz
	touch $@

default-package: $(DEFAULT_STAMP)

# without a mirror there is no lexicon data package: the pipeline is built with lexicon = null, said aloud
demo: install lexicon
	@if $(PY) -c "import stoicheia_lexicon_grc" 2>/dev/null; then $(PY) -m stoicheia_spacy.cli demo --build; \
	else $(PY) -m stoicheia_spacy.cli demo --build --no-lexicon; fi

# The restorer's character n-gram LMs, leaving out every document of the frozen restore-eval samples
# (TM / inscription id digits 3 and 4), not in git: the 7-gram of the papyri (issue 29; ~6 CPU-minutes,
# 12 MB; the fused arm of restore-eval) and the bidirectional Kneser-Ney 8-gram of the papyri's certain
# letters, 15 M literary letters and the inscriptions' training part (issue 43; ~1.5 CPU-minutes,
# RESULTS.md gives its size), which the default pipeline's restorer decodes with. `make lexicon`
# ships both in the data package.
restore-lm: install
	cd projects/restore && ../../$(PY) scripts/fusion_eval.py lm --mirror $${STOICHEIA_ASSET_MIRROR:-../../../shared/data} \
		--fold 3 --docs 1000000 --order 7 --samples samples/fold_3 --out training/ngram_lm7.npz
	cd projects/restore && ../../$(PY) scripts/kn_lm.py build --mirror $${STOICHEIA_ASSET_MIRROR:-../../../shared/data} \
		--fold 3 --samples samples/fold_3 $(KN_SAMPLES) --min-counts $(KN_MIN_COUNTS) --out training/kn_lm8.npz

# The parallels index (issue 40): the letters of the papyri (the restore-eval folds left out, as the
# n-gram LMs) and of the Perseus texts with a suffix array, memory-mapped at use; not in git
# (projects/restore/RESULTS.md gives its size and build time). `make lexicon` ships it in the data package.
parallels-index: install
	cd projects/restore && ../../$(PY) scripts/parallels_index.py --mirror $${STOICHEIA_ASSET_MIRROR:-../../../shared/data} \
		--fold 3 --samples samples/fold_3 --out training/parallels

# The inscriptions' own restoration sources (issue 43, Run 14): a parallels index and a Kneser-Ney
# 8-gram pair of the open inscriptions' training part (id digits 3 and 4 held out, supplied letters as
# separators) and the word list of both indexes (~6 MB, ~20 CPU-seconds); `make lexicon` ships the
# folder as the data package's domains/inscription.
inscription-sources: install
	cd projects/restore && ../../$(PY) scripts/parallels_index.py --mirror $${STOICHEIA_ASSET_MIRROR:-../../../shared/data} \
		--fold 3 --samples samples/inscriptions --no-papyri --no-literary --inscriptions --out training/domains/inscription/parallels
	cd projects/restore && ../../$(PY) scripts/kn_lm.py build --mirror $${STOICHEIA_ASSET_MIRROR:-../../../shared/data} \
		--fold 3 --samples samples/inscriptions --no-papyri --literary-letters 0 --out training/domains/inscription/kn.npz
	cd projects/restore && ../../$(PY) scripts/vocabulary.py --index training/parallels \
		--index training/domains/inscription/parallels --out training/domains/inscription/vocabulary.npy

lint: install
	$(VENV)/bin/ruff check stoicheia_spacy lab pretrain tests projects

typecheck: install
	$(VENV)/bin/mypy stoicheia_spacy lab/stoicheia_lab pretrain

# Headless Chromium for tests/serve (Debian's packages); only as root with apt, and never fatal:
# without a browser those tests skip and say why.
browser:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && ! command -v chromedriver >/dev/null 2>&1; then \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null) \
	    || echo "chromium could not be installed: the browser tests of tests/serve will skip"; \
	fi

pytest: install browser lexicon default-package
	$(PY) -m pytest -q tests

test: lint typecheck pytest

clean:
	rm -rf $(VENV) build dist *.egg-info packages

# The 15-minute GPU window (issue 28, projects/pretrain/GPU.md): prepare on CPU, one device call, install.
#   make gpu-prep                 corpus + treebank workflows, then the bundle in $(GPU_BUNDLE) (< 64 MiB with the tree)
#   make gpu-train [FILES=DIR]    print the device call; with FILES (what came back), resume from it
#   make gpu-install FILES=DIR    verify the parts, bench quality before/after, install if bpc improves
GPU_BUNDLE ?= .bundle
GPU_MODEL ?= assets/models/grc_stoicheia_doc_clean
ABSPY = $(abspath $(PY))

gpu-data: install
	cd projects/corpus && for s in fetch normalize tiers folds doc-clean; do $(ABSPY) -m weasel run $$s . --vars.sample 0 || exit 1; done
	cd projects/parse && for s in extract convert; do $(ABSPY) -m weasel run $$s . || exit 1; done

gpu-prep: gpu-data
	$(PY) -m pretrain gpu prep --out $(GPU_BUNDLE) --mirror $(STOICHEIA_ASSET_MIRROR) --model $(GPU_MODEL)

gpu-train: install
	$(if $(FILES),$(PY) -m pretrain gpu repack --files $(FILES) --bundle $(GPU_BUNDLE) &&) $(PY) -m pretrain gpu args --bundle $(GPU_BUNDLE)

gpu-install: install
	$(if $(FILES),,$(error FILES=DIR (the folder the device call's files came back to) is required))
	$(PY) -m pretrain gpu install --files $(FILES) --model $(GPU_MODEL)
