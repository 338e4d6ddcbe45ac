# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_STAMP := vtt_module/node_modules/.installed
HOST := 127.0.0.1
PORT := 8765
DB := ./initiative-sidecar.db

.PHONY: run test test-python test-node check bench venv clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[hosted,test,dev]"
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(PY) -m adapter serve --host $(HOST) --port $(PORT) --db $(DB)

test: test-python test-node

test-python: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

$(NODE_STAMP): vtt_module/package.json vtt_module/package-lock.json
	cd vtt_module && npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

test-node: $(STAMP)
	@command -v chromium >/dev/null 2>&1 || { echo "make test needs Chromium for the tracker badge test:" \
	  "apt-get install chromium (Debian's package; .ci/run installs it)"; exit 1; }
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
