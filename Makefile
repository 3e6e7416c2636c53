# The two commands a newcomer needs: `make run` (a default chaos run ending in a report)
# and `make test`. Both set up what they need: the system packages of the one declared
# list (scripts/system-packages.txt, installed as root), the virtualenv, the Python
# packages and the Kafka jars from Maven Central (cached in ~/.cache/kchaos).
# `make test-fast` is the edit-test loop: lint, types, and the tests that need no broker,
# Spark or Docker. `make test-fresh` runs that tier in a fresh container (the project's
# own base image and a fresh machine's prerequisites, nothing else) to catch a missing
# install step before CI does.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.kchaos-installed

.PHONY: setup jars system-core system-test test test-fast test-fresh lint typecheck run bench \
	clean engine-up engine-down images

# PYTHONWARNINGS: setuptools warns of an editable install's import precedence, a block
# of text no user can act on.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

setup: system-core $(STAMP) jars

# The declared system packages (scripts/system-packages.txt) a group needs, installed when
# root; otherwise one note per missing package, and the tests that need it skip.
system-core:
	bash scripts/install-system-packages.sh core

system-test:
	bash scripts/install-system-packages.sh core test

jars: $(STAMP)
	$(BIN)/kchaos kafka fetch

FAST_MARKERS := not kafka and not spark and not slow and not docker

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

# The fast tier first (fails in minutes), then only what it left out: no test runs twice.
# That tier runs with a Docker engine (scripts/docker-engine.sh with: the one that answers,
# or a dockerd started here as root and stopped after; images built first); where none
# can be had, its docker tests skip with the reason.
test: setup test-fast
	KCHAOS_PYTHON=$(BIN)/python bash scripts/docker-engine.sh with \
		$(BIN)/pytest -m "not ($(FAST_MARKERS))" $(PYTEST_ARGS)

test-fast: system-test $(STAMP) lint typecheck
	$(BIN)/pytest -q -m "$(FAST_MARKERS)" $(PYTEST_ARGS)

# The fast tier in a fresh container: scripts/test-fresh.sh (needs a Docker engine, which
# it starts as root where none answers, and stops after).
test-fresh:
	bash scripts/test-fresh.sh

run: setup
	$(BIN)/kchaos run $(RUN_ARGS)

bench: setup
	for b in bench/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	$(BIN)/kchaos clean

# Docker (`--platform docker`, docker-compose.yml): an engine (the one that answers, or a
# dockerd started here as root: scripts/docker-engine.sh), then the base, broker and
# worker images built locally. `engine-down` stops only a dockerd `engine-up` started.
engine-up:
	bash scripts/docker-engine.sh up

engine-down:
	bash scripts/docker-engine.sh down

images: setup engine-up
	$(BIN)/python -m harness.platforms.docker_images
