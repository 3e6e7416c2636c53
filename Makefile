# The two commands a newcomer needs: `make run` (a default chaos run ending in a report)
# and `make test`. Both set up what they need: the virtualenv, the Python packages and
# the Kafka jars from Maven Central (cached in ~/.cache/kchaos).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.kchaos-installed

.PHONY: setup jars browser test run lint bench clean engine-up engine-down images

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP) jars

jars: $(STAMP)
	$(BIN)/kchaos kafka fetch

browser:
	bash scripts/install-chromium.sh

test: setup browser
	$(BIN)/ruff check .
	$(BIN)/pytest $(PYTEST_ARGS)

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
