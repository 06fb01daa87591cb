# Meridian: `make run` serves on 127.0.0.1:8080; `make test` runs every test.
# Both install what they need on a Debian machine with Swift, and are safe to repeat.

SWIFT ?= swift
PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8080
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps test-deps build release run test test-swift test-python bench clean

all: build

# libwebsockets (the WebSocket/HTTP transport) and pkg-config for SwiftPM to find it.
deps:
	@if ! pkg-config --exists libwebsockets 2>/dev/null; then \
		echo "installing libwebsockets-dev"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq pkg-config libwebsockets-dev; \
	fi

# Python clients we did not write (websockets), schema validation and pytest.
test-deps: deps
	@if ! $(PYTHON) -c "import websockets, jsonschema, pytest; assert int(websockets.__version__.split('.')[0]) >= 13" 2>/dev/null; then \
		echo "installing Python test packages"; \
		$(PYTHON) -m pip install -q -r Tests/python/requirements.txt; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product meridian

run: release
	.build/release/meridian serve --host $(HOST) --port $(PORT)

test: test-swift test-python

test-swift: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

test-python: test-deps
	$(SWIFT) build --product meridian
	MERIDIAN_BIN=$(CURDIR)/.build/debug/meridian $(PYTHON) -m pytest Tests/python -q

# Benchmarks (not part of `make test`): Meridian and two baselines under `meridian load`;
# writes BENCHMARKS.md and Tests/Benchmarks/results.json. Takes about 10 minutes.
bench: release test-deps
	$(PYTHON) Tests/Benchmarks/bench.py

clean:
	rm -rf .build
