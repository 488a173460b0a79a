# Two commands set up everything on a fresh machine:
#   make lab    set up, then start JupyterLab on the quickstart notebook
#   make test   set up, then run every test (CPU; GPU tests skip without a GPU)
# Both install exactly the versions in the lock (requirements/lock.txt, remade by `make lock`);
# `make test-latest` runs the same suite in .venv-latest on the newest versions pyproject.toml allows.
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
NPM ?= npm
LOCK ?= requirements/lock.txt
BIN := $(VENV)/bin
# Every install goes through these: constrained by the lock, or (LOCK empty) upgraded to the newest allowed.
# uv installs the packages (a cold install of the test extra: 2 s, where pip takes 24 s); pip installs uv itself,
# and torch, so that torch comes from the machine's own wheels (pip's configuration, which uv does not read).
PIP = $(BIN)/python -m pip install -q $(if $(LOCK),-c $(LOCK),--upgrade --upgrade-strategy eager)
UV_PIP = $(BIN)/uv pip install -q --python $(BIN)/python $(if $(LOCK),-c $(LOCK),--upgrade)
STAMP := $(VENV)/.tilelab-installed
# Build tools the JupyterLab panel and the editable install need before the package itself.
TOOLS := $(VENV)/.tilelab-build-tools
# torch (TORCH_SPEC): installed while npm builds the panel.
TORCH := $(VENV)/.tilelab-torch
# The panel's bundle (a prebuilt extension) and what it is built from.
LABEXT := extension/labextension/package.json
LABEXT_SOURCES := package.json package-lock.json tsconfig.json $(wildcard src/*.ts) \
	$(wildcard extension/style/*) $(wildcard extension/schema/*.json)

.PHONY: setup test test-latest lock lab lint browser postgres clean

# Two jobs: npm's install and build run beside pip's (never two installers at once in one venv).
setup:
	$(MAKE) --jobs=2 --output-sync=target $(STAMP)

$(TOOLS): $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) pip uv
	$(UV_PIP) "jupyterlab>=4.4,<5" "hatchling>=1.21" "hatch-jupyter-builder>=0.9" editables
	touch $@

node_modules/.package-lock.json: package.json package-lock.json
	$(NPM) ci --no-audit --no-fund
	touch $@

# The widgets' front-end (src/widgets, CodeMirror): one ES module per entry in tilelab/views/static/,
# which anywidget loads from the package.
WIDGETS := tilelab/views/static/explorer.js
WIDGETS_SOURCES := tsconfig.json webpack.widgets.config.js $(wildcard src/widgets/*.ts)

# tsc, then jupyter-builder against the installed JupyterLab's metadata (offline), then the widgets:
# one recipe makes both (two rules made a parallel setup build the widgets twice).
$(LABEXT) $(WIDGETS) &: $(TOOLS) node_modules/.package-lock.json $(LABEXT_SOURCES) $(WIDGETS_SOURCES)
	PATH="$(abspath $(BIN)):$$PATH" $(NPM) run build:prod

$(TORCH): $(TOOLS)
	$(PIP) "$(TORCH_SPEC)"
	touch $@

# The editable install copies the bundle into $(VENV)/share/jupyter/labextensions/tilelab,
# so a rebuilt bundle is installed again.
$(STAMP): pyproject.toml $(LOCK) $(TOOLS) $(TORCH) $(LABEXT) $(WIDGETS)
	$(UV_PIP) --no-build-isolation -e ".[test]" "$(TORCH_SPEC)"
	touch $@

# Debian's Chromium for the browser tests (never `playwright install`).
browser:
	@test -x /usr/bin/chromium || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver; }

# Debian's PostgreSQL for the shared-history tests (tests/postgres_server.py starts its own server).
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql; }

lint: setup
	$(BIN)/ruff check tilelab tests bench
	$(BIN)/lint-imports

test: setup browser postgres
	$(BIN)/ruff check tilelab tests bench
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -n auto --dist loadgroup --no-loadscope-reorder --durations=15 tests

# The same suite on the newest versions the package's ranges allow (torch stays TORCH_SPEC: the machine's build).
test-latest:
	rm -f .venv-latest/.tilelab-installed .venv-latest/.tilelab-build-tools .venv-latest/.tilelab-torch
	$(MAKE) test VENV=.venv-latest LOCK=

# Remake the lock from pyproject.toml and requirements/build.in (CI's Python and platform).
lock: $(TOOLS)
	$(BIN)/uv pip compile pyproject.toml requirements/build.in --all-extras --python-version 3.11 \
		--python-platform x86_64-manylinux_2_28 --annotation-style line -o requirements/lock.txt

lab: setup
	$(BIN)/jupyter lab notebooks/quickstart.ipynb

clean:
	rm -rf $(VENV) .venv-latest node_modules lib extension/labextension tilelab/views/static tests/ui/artifacts
