# The two commands of the README: `make demo` (the main job) and `make test` (the test suite).
# Each sets up .venv on first use; nothing else needs installing by hand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,postgres,cli,embeddings,bench,field,integrations,otel]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/muscle-mem demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -q -rs

bench: $(STAMP)
	for script in benchmarks/bench_*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .muscle-mem .pytest_cache .mypy_cache .ruff_cache
