# Aisle: `make run` sets up and starts the platform on demo data; `make test` runs the suite.
PY ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
SHARED_DATA ?= ../shared/data
export AISLE_STORAGE_URL ?= file://$(CURDIR)/var/bucket
export AISLE_DATA_DIR ?= $(CURDIR)/var/data

.PHONY: install run demo test check bench docs lint format clean clients

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,image,google,spark]'
	@rm -f $(VENV)/.installed-*; touch $(STAMP)

# The storefront at /shop/ (instantsearch.js and clients/instantsearch, bundled by esbuild from npm): a
# build product, never committed. Without npm it is skipped with a note (CI=true: an error).
ADAPTER := clients/instantsearch
SHOP_BUNDLE := src/aisle/services/search/storefront/app.js
$(SHOP_BUNDLE): $(ADAPTER)/package-lock.json $(wildcard $(ADAPTER)/src/*.js $(ADAPTER)/storefront/*)
	@if command -v npm >/dev/null 2>&1; then \
		cd $(ADAPTER) && npm ci --no-audit --no-fund --loglevel=error && npm run -s build; \
	elif [ "$${CI:-}" = "true" ]; then echo "npm (Node.js 18+) is needed to build the storefront" >&2; exit 1; \
	else echo "note: npm not found, the storefront (/shop/) is not built" >&2; fi

install: $(STAMP) $(SHOP_BUNDLE)

# Clients generated from each service's OpenAPI (build products, git-ignored): the Python client packages
# clients/python/aisle-<service>-client (openapi-python-client, PyPI; a warning fails) and the TypeScript
# types clients/instantsearch/types/<service>.d.ts (openapi-typescript, npm).
SERVICES := search proxy predict edit rules vectors auth analytics
clients: install
	$(BIN)/aisle openapi --out clients/openapi
	@for s in $(SERVICES); do \
		PATH=$(abspath $(BIN)):$$PATH $(BIN)/openapi-python-client generate --path clients/openapi/$$s.json \
			--output-path clients/python/aisle-$$s-client --config clients/openapi-python-client.yaml \
			--overwrite --fail-on-warning || exit 1; \
	done
	cd $(ADAPTER) && npm run -s types  # types/<service>.d.ts, then tsc --checkJs over the adapter

# the whole demo in the foreground (minutes: embeddings, SIMILAR_ITEMS, the ranker)
demo: install
	$(BIN)/aisle demo --data-dir $(SHARED_DATA) --if-missing

# only the cheap part before the services start; the heavy artifacts build in the background
run: install
	$(BIN)/aisle demo --data-dir $(SHARED_DATA) --if-missing --cheap
	@$(BIN)/aisle auth demo-client
	@echo "Merchandising console: http://127.0.0.1:8085/ (sign in with the token above)"
	@echo "Background builds (embeddings, ranker): '$(BIN)/aisle status' or GET http://127.0.0.1:8080/health"
	AISLE_PHOTOS_DIR=$${AISLE_PHOTOS_DIR:-$(abspath $(SHARED_DATA))} \
	AISLE_STOREFRONT_TENANTS=$${AISLE_STOREFRONT_TENANTS:-fashion,homedepot,default} \
	$(BIN)/aisle serve --build-demo $(SHARED_DATA)

# pytest-xdist: one worker per core; a test file stays on one worker, so its module fixtures build once
# (--dist loadgroup would group by mark, but with pytest 9 it spreads a group's tests over the workers)
PYTEST_WORKERS ?= auto
XDIST := -n $(PYTEST_WORKERS) --dist loadfile

# everything: the README's test command and CI's (the strict docs build first: a broken link fails)
test: install docs
	$(BIN)/python -m pytest -q $(XDIST) $(PYTEST_ARGS)

# the fast tier (unit and contract tests; no shared data, demo tenants, browser, service processes or
# Spark): the developer's loop, under 3 minutes. A test over 60 s here belongs in the slow tier.
check: install
	$(BIN)/python -m pytest -q $(XDIST) -m "not slow" --timeout=60 $(PYTEST_ARGS)

bench: install
	$(BIN)/python -m bench --data-dir $(SHARED_DATA)

# the documentation site (mkdocs-material, mkdocs.yml) from docs/ into var/site (git-ignored), strictly:
# a warning (a broken link or anchor, a page left out of the nav) fails
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir var/site

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy src

format: install
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

clean:
	rm -rf var .pytest_cache clients/openapi clients/python clients/instantsearch/types
