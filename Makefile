# The two commands: `make run` and `make test`. Everything else is a helper for them or a benchmark.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000

.PHONY: run test test-unit test-browser lint typecheck docs docs-serve install install-dev demo bench bench-ingest bench-import bench-sync bench-compiler bench-pipeline bench-memory bench-proactivestream bench-labels bench-queues bench-export bench-annotation bench-api bench-scale bench-chaos bench-qa mutation clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit("Aframes needs Python 3.11 or newer") if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

## make run: install, migrate, load the demo team and data, start web server and worker.
run: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py serve --port $(PORT)

## make test: the whole suite (unit and service tests, then browser tests in their own run).
test: test-unit test-browser

test-unit: install-dev
	$(BIN)/python -m pytest -m "not browser" -p no:cacheprovider -n auto --dist loadfile

test-browser: install-dev
	$(BIN)/python -m pytest -m browser -p no:cacheprovider

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python manage.py makemigrations --check --dry-run

typecheck: install-dev
	$(BIN)/mypy --strict compiler memory/engine aframes_sync

## make docs: the documentation site from docs/ into site/; any warning (a broken link) fails.
docs: install-dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: install-dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8001

## Benchmarks: heavy runs, never part of make test. Each prints a report ending in one JSON line.
bench: bench-labels bench-queues bench-export bench-ingest bench-import bench-sync bench-compiler bench-pipeline bench-memory bench-proactivestream bench-annotation bench-api bench-scale bench-cost bench-routines bench-qa

bench-ingest: install-dev
	$(BIN)/python -m perf.ingest

bench-import: install-dev
	$(BIN)/python -m perf.imports

bench-sync: install-dev
	$(BIN)/python -m perf.sync

bench-pipeline: install-dev
	$(BIN)/python -m perf.pipeline

bench-memory: install-dev
	$(BIN)/python -m perf.memory

bench-proactivestream: install-dev
	$(BIN)/python -m perf.proactivestream

bench-scale: install-dev
	$(BIN)/python -m perf.scale

bench-queues: install-dev
	$(BIN)/python -m perf.queues

## make bench-export: a 1,000,000-event NDJSON export under ASGI, the worker's peak memory.
bench-export: install-dev
	$(BIN)/python -m perf.export

bench-labels: install-dev
	$(BIN)/python -m perf.labels

bench-annotation: install-dev
	$(BIN)/python -m perf.annotation

bench-api: install-dev
	$(BIN)/python -m perf.api_bench

## Routines, replay plans, R and h on 60 SYNTHETIC days (pure path, no database; < 2 min).
.PHONY: bench-cost
bench-cost: install-dev
	$(BIN)/python -m perf.cost

## The routine miner alone on long SYNTHETIC action streams (no capture, no compile).
.PHONY: bench-routines
bench-routines: install-dev
	$(BIN)/python -m perf.routines_scale --days 60

## make bench-qa: the QA harness without an LLM on the demo days (oracle, agreement, tokens).
bench-qa: install-dev
	$(BIN)/python -m perf.qa

## Not in `bench`: it kills workers and restarts its own PostgreSQL and Redis (~10-15 min).
bench-chaos: install-dev
	$(BIN)/python -m perf.chaos

bench-compiler: install-dev
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python -m perf.compiler_bench

## make mutation: mutmut over compiler/ and memory/engine/, each unit against its own tests
## (perf/mutation.py); a table per module, then one JSON line. Not part of make test.
mutation: install-dev
	$(BIN)/python -m perf.mutation

clean:
	rm -rf $(VENV) var
