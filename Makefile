# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_STAMP := vtt_module/node_modules/.installed
HOST := 127.0.0.1
PORT := 8765
DB := ./initiative-sidecar.db

.PHONY: run test test-fast test-python test-node tools check bench venv clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[hosted,test,dev]"
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(PY) -m adapter serve --host $(HOST) --port $(PORT) --db $(DB)

# Everything, on a fixed hypothesis seed (tests/conftest.py): the same answer on the same commit.
# `tools` runs first, so a machine without Chromium or Node stops here in a second, naming the
# command that fixes it, not after minutes of tests (docs/testing.md).
test: tools
	$(MAKE) --no-print-directory test-python
	$(MAKE) --no-print-directory test-node

# The fast loop (about 30 s on 2 cores, 25 s of CPU; it was 60 s): every Python test but the slow
# tiers, which are marked in tests/conftest.py (TIER_PATHS, TIER_FIXTURES): subprocess servers,
# browsers, PostgreSQL/Redis/nginx, the wheel, the bench, the long kill/restart loops and the waits
# on the clock; and each property draws a tenth of its examples (the hypothesis profile `fast`,
# tests/support/examples.py). `make test` still runs them all, with every example.
FAST := not (slow or subprocess or browser or services or wheel or bench)
test-fast: $(STAMP)
	$(PY) -m pytest -m "$(FAST)" --hypothesis-profile=fast $(PYTEST_ARGS)

test-python: tools $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

# What the tests need beside Python: Chromium (the browser tests), Node >= 20 and npm (the
# module's tests). .ci/run installs them itself; here, the one command that does.
tools:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  echo "make test needs$$missing (the browser and module tests). Install with:"; \
	  echo "  sudo apt-get install -y$$missing"; \
	  echo "(or run 'make test-fast', which needs neither)"; exit 1; fi; \
	major=$$(node -p 'process.versions.node.split(".")[0]'); \
	if [ "$$major" -lt 20 ]; then \
	  echo "make test needs Node >= 20 for the module's tests; this is $$(node --version)." \
	    "Install a newer one, e.g.: sudo apt-get install -y nodejs (Debian 13), or https://nodejs.org"; exit 1; fi

$(NODE_STAMP): vtt_module/package.json vtt_module/package-lock.json
	cd vtt_module && npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

test-node: tools $(STAMP)
	@if [ -f vtt_module/package.json ]; then \
	  $(MAKE) --no-print-directory $(NODE_STAMP) && \
	  cd vtt_module && SIDECAR_PYTHON=$(abspath $(PY)) npm run test:both; \
	else echo "no module tests yet"; fi

# ruff (pinned, explicit rule set) and mypy --strict over the package and the tests ([tool.mypy] files).
check: $(STAMP)
	$(VENV)/bin/ruff check adapter tests
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) -m adapter bench

clean:
	rm -rf $(VENV) vtt_module/node_modules .pytest_cache

# A published release in dist/: the module's manifest and zip (URLs under RELEASE_URL, default
# the project's latest GitHub release), the wheel and the sdist. One version for all of them:
# adapter/version.py.
.PHONY: release
release: $(STAMP)
	rm -rf dist
	$(PY) -m adapter module --out dist $(if $(RELEASE_URL),--url $(RELEASE_URL))
	$(PY) -m build --outdir dist .
