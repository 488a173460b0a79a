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
# uv installs the packages (the test extra, cold: 10 s, where pip took 24 s); pip installs uv itself, and torch,
# so that torch comes from the machine's own wheels (pip's configuration, which uv does not read).
# --compile-bytecode: as pip does. Without it no module has a .pyc until first imported, and none ever has where
# PYTHONDONTWRITEBYTECODE is set: every test process then compiled TileLang, pandas, Jupyter... from source.
PIP = $(BIN)/python -m pip install -q $(if $(LOCK),-c $(LOCK),--upgrade --upgrade-strategy eager)
UV_PIP = $(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python $(if $(LOCK),-c $(LOCK),--upgrade)
STAMP := $(VENV)/.tilelab-installed
# Build tools the JupyterLab panel and the editable install need before the package itself.
TOOLS := $(VENV)/.tilelab-build-tools
# torch (TORCH_SPEC): installed while npm builds the panel.
TORCH := $(VENV)/.tilelab-torch
# The panel's bundle (a prebuilt extension) and what it is built from.
LABEXT := extension/labextension/package.json
LABEXT_SOURCES := package.json package-lock.json tsconfig.json $(wildcard src/*.ts) \
	$(wildcard extension/style/*) $(wildcard extension/schema/*.json)

.PHONY: setup test-setup test test-latest lock lab lint browser postgres debian-test-packages clean

# Two jobs: npm's install and build run beside pip's (never two installers at once in one venv).
setup:
	$(MAKE) --jobs=2 --output-sync=target $(STAMP)

# A file of its own: a venv made before uv installed the packages gets it too.
$(BIN)/uv: $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) uv
	touch $@

$(TOOLS): $(LOCK) $(BIN)/uv
	$(UV_PIP) pip "jupyterlab>=4.4,<5" "hatchling>=1.21" "hatch-jupyter-builder>=0.9" editables
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

# Debian's packages the tests need, where missing: Chromium for the browser tests (never `playwright install`)
# and PostgreSQL for the shared-history tests (tests/postgres_server.py starts its own server).
BROWSER_PACKAGES = $(if $(wildcard /usr/bin/chromium),,chromium chromium-driver)
POSTGRES_PACKAGES = $(if $(wildcard /usr/lib/postgresql/*/bin/initdb),,postgresql)
# $(call apt_install,PACKAGES): one apt-get for PACKAGES, or nothing when none is missing.
apt_install = $(if $(strip $(1)),apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(1),true)

browser:
	@$(call apt_install,$(BROWSER_PACKAGES))

postgres:
	@$(call apt_install,$(POSTGRES_PACKAGES))

# Both in one apt-get (a second would wait on dpkg's lock), beside the package's set-up: on a fresh machine
# apt's downloads and unpacking overlap pip's and npm's.
test-setup:
	$(MAKE) --jobs=3 --output-sync=target $(STAMP) debian-test-packages

debian-test-packages:
	@$(call apt_install,$(BROWSER_PACKAGES) $(POSTGRES_PACKAGES))

lint: setup
	$(BIN)/ruff check tilelab tests bench
	$(BIN)/lint-imports

# compileall: the suite starts over a hundred Python processes that import TileLab, and where PYTHONDONTWRITEBYTECODE
# is set none of them writes a .pyc: each compiled TileLab (and the tests' helpers) from source again.
test: test-setup
	$(BIN)/ruff check tilelab tests bench
	$(BIN)/lint-imports
	$(BIN)/python -m compileall -q tilelab tests bench
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
