# Meridian: `make run` serves on 127.0.0.1:8080; `make test` runs every test.
# Both install what they need on a Debian machine with Swift, and are safe to repeat.

SWIFT ?= swift
PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8080
DATA_DIR ?= ./data
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: test-times all deps service-deps web-deps postgres-deps netns-deps test-deps browser-deps build release run test test-swift check-client-deps test-python test-tsan test-fuzz-regressions test-partitions fuzz fuzz-build fuzz-http bench bench-event-loop microbench clean

all: build

# libwebsockets (the WebSocket/HTTP transport) and pkg-config for SwiftPM to find it; liburing
# (a fan-out's writes in one system call); SQLite's headers for the session store (GRDB).
deps:
	@if ! pkg-config --exists libwebsockets 2>/dev/null; then \
		echo "installing libwebsockets-dev"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq pkg-config libwebsockets-dev; \
	fi
	@if ! pkg-config --exists liburing 2>/dev/null; then \
		echo "installing liburing-dev (batched socket writes)"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq liburing-dev; \
	fi
	@if ! pkg-config --exists sqlite3 2>/dev/null; then \
		echo "installing libsqlite3-dev"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libsqlite3-dev; \
	fi
	@if ! pkg-config --exists hiredis 2>/dev/null; then \
		echo "installing libhiredis-dev"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libhiredis-dev; \
	fi
	@if ! pkg-config --exists openssl 2>/dev/null; then \
		echo "installing libssl-dev (TLS to Redis)"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libssl-dev; \
	fi

# The servers a cluster runs on, for the tests (each test starts its own on a free loopback port;
# the packages' system services are not used).
service-deps:
	@if ! command -v redis-server >/dev/null 2>&1; then \
		echo "installing redis-server"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq redis-server; \
	fi
	@if [ ! -f /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 ] && [ ! -f /usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1 ]; then \
		echo "installing faketime (a node's clock stepped, in the cluster tests)"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq faketime; \
	fi

# The map libraries of the dashboard's example pages: Leaflet from Debian (served at /vendor/leaflet/),
# MapLibre GL JS 5.3.0 from a pinned PyPI package, checked by its hash (served at /vendor/maplibre-gl/).
web-deps:
	@if [ ! -f /usr/share/javascript/leaflet/leaflet.esm.js ]; then \
		echo "installing libjs-leaflet"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libjs-leaflet; \
	fi
	@$(SUDO) env PYTHON=$(PYTHON) Tools/vendor-maplibre.sh

# PostgreSQL's binaries for the tests of the PostgreSQL store, Swift and Python: they start a server of
# their own (initdb in a temporary directory, on a free loopback port), so no system service needs to
# run, and one the package may have started is left alone. Debian keeps the binaries off PATH.
postgres-deps:
	@if ! ls /usr/lib/postgresql/*/bin/initdb /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 \
		&& ! { command -v initdb && command -v pg_ctl; } >/dev/null 2>&1; then \
		echo "installing postgresql"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq postgresql; \
	fi

# iptables for the partition tests (Tests/python/netns_fixture.py): links between network namespaces cut
# (DROP) and delayed (NFQUEUE; this kernel has no sch_netem). iproute2 brings `ip netns`.
netns-deps:
	@if ! command -v iptables >/dev/null 2>&1 || ! command -v ip >/dev/null 2>&1; then \
		echo "installing iptables and iproute2"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq iptables iproute2; \
	fi

# Headless Chromium and its driver for the dashboard's browser tests.
browser-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
		echo "installing chromium and chromium-driver"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium chromium-driver; \
	fi

# Python clients we did not write (websockets, selenium, axe-core through axe-selenium-python), schema validation,
# schemathesis (the HTTP API against Protocol/openapi.yaml) and pytest.
test-deps: deps service-deps postgres-deps web-deps browser-deps netns-deps
	@if ! command -v shellcheck >/dev/null 2>&1; then \
		echo "installing shellcheck"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq shellcheck; \
	fi
	@if ! command -v tsc >/dev/null 2>&1; then \
		echo "installing node-typescript (tsc: meridian.d.ts checked against meridian.js)"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq node-typescript; \
	fi
	@if ! $(PYTHON) -c "import websockets, jsonschema, pytest, xdist, selenium, yaml, axe_selenium_python, schemathesis; assert int(websockets.__version__.split('.')[0]) >= 13; assert int(schemathesis.__version__.split('.')[0]) >= 4" 2>/dev/null; then \
		echo "installing Python test packages"; \
		$(PYTHON) -m pip install -q -r Tests/python/requirements.txt; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product meridian

run: release web-deps
	.build/release/meridian serve --auth none --host $(HOST) --port $(PORT) --data-dir $(DATA_DIR)

# Each phase is timed (Tools/timed): the table at the end says where the time went.
TIMED = Tools/timed
test: test-times test-swift check-client-deps test-python test-tsan
	@echo "make test: time by phase (artifacts/test-times.tsv)"; $(TIMED) --report

# In `make test` each Swift suite runs once: those of targets that run threads under ThreadSanitizer
# (test-tsan, TSAN_TESTS), the others in the plain build. `make test-swift` alone runs every suite plain.
test: PLAIN_SKIP = --skip '$(TSAN_TESTS)'

test-times:
	@$(TIMED) --reset

test-swift: deps service-deps postgres-deps
	$(TIMED) "build: debug, with tests" $(SWIFT) build --build-tests
	$(TIMED) "swift test$(if $(PLAIN_SKIP),: targets without threads)" $(SWIFT) test --skip-build $(PLAIN_SKIP)
	@# The client's suite again over each other wire (Tests/MeridianClientTests/Support.swift, Wire):
	@# the portable transport, then both transports over TLS with client certificates, one test at a time.
	@# The portable transport runs in the plain build only: its tasks are Swift concurrency on SwiftNIO,
	@# and under ThreadSanitizer they crashed the Swift runtime once (a SEGV in its generic-metadata code,
	@# no race reported; swiftlang/swift#58135), which a test of this package cannot tell from a defect.
	$(TIMED) "swift test: client, portable transport" env MERIDIAN_CLIENT_WIRE=nio $(SWIFT) test --skip-build --filter MeridianClientTests
	$(TIMED) "swift test: client, portable transport, TLS" env MERIDIAN_CLIENT_WIRE=nio-tls $(SWIFT) test --skip-build --no-parallel --filter MeridianClientTests
	$(TIMED) "swift test: client, libwebsockets, TLS" env MERIDIAN_CLIENT_WIRE=lws-tls $(SWIFT) test --skip-build --no-parallel --filter MeridianClientTests

# The MeridianClient library builds alone and holds nothing of the server (its targets, its imports, its symbols).
check-client-deps: deps
	$(TIMED) "client dependency check" env SWIFT=$(SWIFT) Tools/check-client-deps.sh

PYTEST_WORKERS ?= 3
test-python: test-deps
	$(TIMED) "build: debug meridian" $(SWIFT) build --product meridian
	$(TIMED) "build: debug meridian-follow-example" $(SWIFT) build --product meridian-follow-example
	@# Two passes (Tests/python/conftest.py, SERIAL): the tests that measure time or drive a browser one at a
	@# time, then the rest on PYTEST_WORKERS workers at once; most of those wait on sockets, not on a core.
	@# Each pass ends with its slowest tests (--durations): where to look when a pass grows.
	$(TIMED) "pytest Tests/python: one at a time" env MERIDIAN_BIN=$(CURDIR)/.build/debug/meridian $(PYTHON) -m pytest Tests/python -q -m serial --durations=15
	$(TIMED) "pytest Tests/python: $(PYTEST_WORKERS) at once" env MERIDIAN_BIN=$(CURDIR)/.build/debug/meridian $(PYTHON) -m pytest Tests/python -q -m "not serial" -n $(PYTEST_WORKERS) --durations=10

# The cluster under network partitions: three nodes, Redis and PostgreSQL in network namespaces of
# their own (root, iproute2, iptables), links cut, delayed and flapping under write load with a
# history check, and one reproduction per fault found (about 4 minutes; not part of `make test`).
test-partitions: test-deps
	$(SWIFT) build --product meridian
	MERIDIAN_PARTITION_TESTS=1 MERIDIAN_BIN=$(CURDIR)/.build/debug/meridian $(PYTHON) -m pytest -q \
		Tests/python/test_cluster_partitions.py Tests/python/test_cluster_partition_defects.py

# ThreadSanitizer over the tests of every target that runs threads: this package's own targets are built
# again with -sanitize=thread in the ordinary build directory (MERIDIAN_SANITIZE, Package.swift), the
# dependencies keep their objects, so this build takes a few minutes where a whole instrumented build
# took twelve. Races between Meridian's threads are seen (the live tests start the instrumented
# `meridian` too); one inside a dependency's own code is not looked for. The first race stops the run
# and fails it. It runs last among the Swift phases: `.build/debug` holds the instrumented build after
# it, and the next plain build recompiles this package's targets only.
# Every lock is a MeridianSync `Locked`, which tells TSan when it is taken and given back: on Linux
# TSan cannot see the standard library's Synchronization.Mutex by itself (a futex handed over in the
# kernel), and took the accesses made under one for races. Latency bounds in the tests get 3 times
# their usual time (MERIDIAN_TEST_SLOWDOWN): TSan slows the code several times.
TSAN_TESTS ?= MeridianSyncTests|MeridianRedisTests|MeridianTransportCoreTests|MeridianClientTransportTests|MeridianTransportTests|MeridianAuthTests|MeridianStorageTests|MeridianServerTests|MeridianClientTests|MeridianLoadTests
TSAN_ENV = MERIDIAN_SANITIZE=thread TSAN_OPTIONS=halt_on_error=1 MERIDIAN_TEST_SLOWDOWN=3
test-tsan: deps service-deps postgres-deps
	$(TIMED) "build: ThreadSanitizer (this package's targets), with tests" env MERIDIAN_SANITIZE=thread $(SWIFT) build --build-tests
	$(TIMED) "swift test under ThreadSanitizer" env $(TSAN_ENV) $(SWIFT) test --skip-build --filter '$(TSAN_TESTS)'

# Fuzzing (FuzzTesting/): every kept crash input and seed through the harness, uninstrumented. The harness
# is a target of this package, so the plain `swift test` of `make test` runs these already.
test-fuzz-regressions: deps
	$(SWIFT) test --filter FuzzHarnessTests

# libFuzzer with AddressSanitizer, each target for FUZZ_SECONDS. New inputs go to
# FuzzTesting/artifacts/TARGET/corpus, crash inputs to FuzzTesting/artifacts/TARGET/
# (both ignored by git); fix the bug, then keep the input in FuzzTesting/Regressions/TARGET/.
# LeakSanitizer is off: these runs look for crashes and broken invariants, not leaks.
# Session scripts get up to 1024 bytes (about 250 steps) from the start, not after a slow ramp.
# Then `fuzz-http`: schemathesis against the real server, two runs of FUZZ_SECONDS more.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= decoder session http
FUZZ_FLAGS ?=
FUZZ_BUILD := FuzzTesting/.build-fuzz

# `--sanitize fuzzer` so SwiftPM lets libFuzzer's main be the entry point, and -sanitize=fuzzer for the
# coverage it needs; one product at a time so the root package's other targets are not built.
fuzz-build:
	cd FuzzTesting && for p in FuzzDecoder FuzzSession FuzzHTTP; do \
		$(SWIFT) build -c debug --scratch-path .build-fuzz --product $$p \
			--sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING || exit 1; \
	done

fuzz: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
		case $$t in \
			decoder) exe=FuzzDecoder; opts=-dict=FuzzTesting/Dictionaries/decoder.dict;; \
			session) exe=FuzzSession; opts="-max_len=1024 -len_control=0";; \
			http) exe=FuzzHTTP; opts="-dict=FuzzTesting/Dictionaries/http.dict -max_len=4096";; \
			*) echo "unknown fuzz target $$t"; exit 2;; \
		esac; \
		mkdir -p FuzzTesting/artifacts/$$t/corpus; \
		echo "== $$exe for $(FUZZ_SECONDS) s"; \
		ASAN_OPTIONS=detect_leaks=0 $(FUZZ_BUILD)/debug/$$exe \
			FuzzTesting/artifacts/$$t/corpus FuzzTesting/Corpus/$$t FuzzTesting/Regressions/$$t \
			-max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
			$$opts -artifact_prefix=FuzzTesting/artifacts/$$t/ $(FUZZ_FLAGS); \
	done
	$(MAKE) fuzz-http

# Schemathesis against Protocol/openapi.yaml and the real server (tokens checked): both runs of
# Tests/python/test_http_schemathesis.py (the whole document, every phase; the event log's query)
# for FUZZ_HTTP_SECONDS each, with a new seed each time (FUZZ_HTTP_SEED repeats one). `make test`
# runs the same file bounded and derandomized. A failure prints the requests that reproduce it.
FUZZ_HTTP_SECONDS ?= $(FUZZ_SECONDS)
ifndef FUZZ_HTTP_SEED
FUZZ_HTTP_SEED := $(shell date +%s)
endif
# FUZZ_HTTP_SANITIZE=thread: against the server built under ThreadSanitizer, as `make test` leaves it
# (.ci/run: no rebuild, and a race the requests provoke stops the server and fails the run).
FUZZ_HTTP_SANITIZE ?=
fuzz-http:
	env MERIDIAN_SANITIZE=$(FUZZ_HTTP_SANITIZE) $(SWIFT) build --product meridian
	@echo "== schemathesis for $(FUZZ_HTTP_SECONDS) s, seed $(FUZZ_HTTP_SEED)"
	MERIDIAN_BIN=$(CURDIR)/.build/debug/meridian MERIDIAN_SCHEMATHESIS_SEED=$(FUZZ_HTTP_SEED) TSAN_OPTIONS=halt_on_error=1 \
		MERIDIAN_SCHEMATHESIS_MAX_TIME=$(FUZZ_HTTP_SECONDS) MERIDIAN_SCHEMATHESIS_EXAMPLES=100000 \
		$(PYTHON) -m pytest Tests/python/test_http_schemathesis.py -q

# Benchmarks (not part of `make test`): Meridian against the strong libwebsockets baseline
# (Tests/Benchmarks/lws_rooms.c, on poll and on libev) under `meridian load`, and a well-behaved
# member's latency under five attacks (abuse); writes BENCHMARKS.md and Tests/Benchmarks/results.json.
# About 40 minutes; `make bench BENCH_FLAGS=--quick` runs every scenario briefly (a smoke run of a
# few minutes); `make bench BENCH_FLAGS='--only abuse'` only the attacks (about 13 minutes).
BENCH_FLAGS ?=
bench: release test-deps
	$(PYTHON) Tests/Benchmarks/bench.py $(BENCH_FLAGS)

# The transport's event loops (poll, libev) as idle connections grow: 1k, 10k and 50k connections.
bench-event-loop: release test-deps
	$(PYTHON) Tests/Benchmarks/event_loop.py $(BENCH_FLAGS)

# Micro-benchmarks of one drag move (package-benchmark, in Benchmarks/, its own package).
microbench: deps
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark $(MICROBENCH_FLAGS)

clean:
	rm -rf .build
