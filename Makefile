# Aisle: `make run` sets up and starts the platform on demo data; `make test` runs the suite.
PY ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
SHARED_DATA ?= ../shared/data
export AISLE_STORAGE_URL ?= file://$(CURDIR)/var/bucket
export AISLE_DATA_DIR ?= $(CURDIR)/var/data

.PHONY: install run demo test bench lint format clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,image,spark]'
	@rm -f $(VENV)/.installed-*; touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/aisle demo --data-dir $(SHARED_DATA) --if-missing

run: demo
	@$(BIN)/aisle auth demo-client
	$(BIN)/aisle serve

test: install
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: install
	$(BIN)/python -m bench --data-dir $(SHARED_DATA)

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy src

format: install
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

clean:
	rm -rf var .pytest_cache
