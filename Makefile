# The two commands of the README: `make demo` (the main job) and `make test` (the test suite).
# Each sets up .venv on first use; nothing else needs installing by hand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PHOENIX_VENV := .venv-phoenix
PHOENIX_STAMP := $(PHOENIX_VENV)/.installed

.PHONY: demo test lint bench phoenix clean

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

# Skipped tests are summed up, one line per reason (tests/skip_summary.py).
test: lint
	$(BIN)/pytest -q

bench: $(STAMP)
	for script in benchmarks/bench_*.py; do $(BIN)/python $$script || exit 1; done

# End to end with Arize Phoenix (about 850 MiB, so apart from .venv): spans sent over OTLP, read back.
$(PHOENIX_STAMP): pyproject.toml
	$(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/pip install --quiet -e '.[otel]' arize-phoenix opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
	touch $(PHOENIX_STAMP)

phoenix: $(PHOENIX_STAMP)
	$(PHOENIX_VENV)/bin/python tests/e2e/phoenix_spans.py

clean:
	rm -rf $(VENV) $(PHOENIX_VENV) .muscle-mem .pytest_cache .mypy_cache .ruff_cache
