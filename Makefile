# Two commands set up everything on a fresh machine:
#   make lab    set up, then start JupyterLab on the quickstart notebook
#   make test   set up, then run every test (CPU; GPU tests skip without a GPU)
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
NPM ?= npm
BIN := $(VENV)/bin
STAMP := $(VENV)/.tilelab-installed
# Build tools the JupyterLab panel and the editable install need before the package itself.
TOOLS := $(VENV)/.tilelab-build-tools
# The panel's bundle (a prebuilt extension) and what it is built from.
LABEXT := extension/labextension/package.json
LABEXT_SOURCES := package.json package-lock.json tsconfig.json $(wildcard src/*.ts) \
	$(wildcard extension/style/*) $(wildcard extension/schema/*.json)

.PHONY: setup test lab lint browser postgres clean

setup: $(STAMP)

$(TOOLS):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "jupyterlab>=4.4,<5" "hatchling>=1.21" "hatch-jupyter-builder>=0.9" editables
	touch $@

node_modules/.package-lock.json: package.json package-lock.json
	$(NPM) ci --no-audit --no-fund
	touch $@

# tsc, then jupyter-builder against the installed JupyterLab's metadata (offline).
$(LABEXT): $(TOOLS) node_modules/.package-lock.json $(LABEXT_SOURCES)
	PATH="$(abspath $(BIN)):$$PATH" $(NPM) run build:prod

# The widgets' front-end (src/widgets, CodeMirror): one ES module per entry in tilelab/views/static/,
# which anywidget loads from the package (build:prod builds it too; this rule rebuilds only it).
WIDGETS := tilelab/views/static/explorer.js
WIDGETS_SOURCES := tsconfig.json webpack.widgets.config.js $(wildcard src/widgets/*.ts)

$(WIDGETS): $(LABEXT) $(WIDGETS_SOURCES)
	PATH="$(abspath $(BIN)):$$PATH" $(NPM) run build:lib
	PATH="$(abspath $(BIN)):$$PATH" $(NPM) run build:widgets

# The editable install copies the bundle into $(VENV)/share/jupyter/labextensions/tilelab,
# so a rebuilt bundle is installed again.
$(STAMP): pyproject.toml $(TOOLS) $(LABEXT) $(WIDGETS)
	$(BIN)/python -m pip install -q "$(TORCH_SPEC)"
	$(BIN)/python -m pip install -q --no-build-isolation -e ".[test]"
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
	$(BIN)/python -m pytest -q tests

lab: setup
	$(BIN)/jupyter lab notebooks/quickstart.ipynb

clean:
	rm -rf $(VENV) node_modules lib extension/labextension tilelab/views/static tests/ui/artifacts
