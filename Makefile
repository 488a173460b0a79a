# Two commands set up everything on a fresh machine:
#   make lab    set up, then start JupyterLab on the quickstart notebook
#   make test   set up, then run every test (CPU; GPU tests skip without a GPU)
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.tilelab-installed

.PHONY: setup test lab lint browser clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "$(TORCH_SPEC)"
	$(BIN)/python -m pip install -q -e ".[test]"
	touch $@

# Debian's Chromium for the browser tests (never `playwright install`).
browser:
	@test -x /usr/bin/chromium || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver; }

lint: setup
	$(BIN)/ruff check tilelab tests bench

test: setup browser
	$(BIN)/ruff check tilelab tests bench
	$(BIN)/python -m pytest -q tests

lab: setup
	$(BIN)/jupyter lab notebooks/quickstart.ipynb

clean:
	rm -rf $(VENV) node_modules lib extension/labextension tests/ui/artifacts
