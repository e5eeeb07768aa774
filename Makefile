# dealroom: `make serve` runs the server on embedded defaults; `make test` passes the tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test lint typecheck check schema bench clean web

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/dealroom serve

# Four workers on two cores, each with its own database (the session fixture makes one per
# process): about a third of a worker's time is waiting (server stops, subprocess starts,
# quiet windows), which two more workers fill; work stealing keeps the long tests (the
# negotiation corpus is 8 chunks) from leaving one worker alone at the end (docs/DECISIONS.md).
# `make test PYTEST_ARGS=` runs the suite serially, which must pass too.
PYTEST_ARGS ?= -n 4 --dist worksteal

# The npm clients the conformance tests run (tests/js: graphql-http's audit, Apollo Client,
# urql), installed from their lock file; the tests fail under CI=true without them.
JS_STAMP := tests/js/node_modules/.installed

$(JS_STAMP): tests/js/package.json tests/js/package-lock.json
	cd tests/js && npm ci --no-audit --no-fund
	touch $(JS_STAMP)

test: $(STAMP) $(JS_STAMP)
	$(BIN)/pytest -q -rs $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check dealroom tests bench
	$(BIN)/ruff format --check dealroom tests bench
	# The token and participant benchmarks' smoke runs: they must keep working as the agents change.
	$(BIN)/python bench/tokens.py --quick > /dev/null
	$(BIN)/python bench/participants.py --quick > /dev/null

typecheck: $(STAMP)
	$(BIN)/mypy dealroom tests bench

check: lint typecheck test

schema: $(STAMP)
	$(BIN)/dealroom export-schema --output schema.graphql

bench: $(STAMP)
	$(BIN)/python bench/queries.py
	$(BIN)/python bench/realtime.py
	$(BIN)/python bench/turns.py
	$(BIN)/python bench/turn_machine.py
	$(BIN)/python bench/tokens.py
	$(BIN)/python bench/offers.py
	$(BIN)/python bench/web.py
	$(BIN)/python bench/body_decode.py

# The web client and GraphiQL (web/ -> dealroom/web/, committed), and the list of the client's
# GraphQL documents (dealroom/web/trusted-documents.json): needs Node.js and npm; serving does not.
web:
	cd web && npm ci --no-audit --no-fund && npx tsc --noEmit -p . && node build.mjs && node trusted-documents.mjs

clean:
	rm -rf $(VENV) .dealroom .pytest_cache .mypy_cache .ruff_cache
