# Two commands a fresh machine needs:  `make run` (install + start the app)  and  `make test`.
# Both are idempotent: the venv and its packages are installed once, then a stamp file skips the work.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8501
# Models come from PyPI packages and the repository only; never from a model hub at run time.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1
# OpenMP threads spin briefly before sleeping (embedded.configure_openmp; docs/app.md). On a busy, shared
# machine run `OMP_WAIT_POLICY=PASSIVE make run` (threads sleep at once; libgomp's default spin of
# 300,000 made generation 6-10x slower there).
export GOMP_SPINCOUNT ?= 10000

# `make serve` listens on the same HOST and PORT as `make run`, but PORT defaults to 8000 there (vLLM's and the OpenAI
# clients' usual port) unless given on the command line or in the environment; SERVE_ARGS adds options
# (`make serve SERVE_ARGS="--upstream http://127.0.0.1:8080/v1 --mode repair"`, docs/serve.md).
SERVE_PORT = $(if $(filter command line environment,$(origin PORT)),$(PORT),8000)
SERVE_ARGS ?=
# `make test` runs the suite in this many worker processes (pytest-xdist), each taking a whole test file at a time so a
# file's app server is started once; 2 suits the 2-core machine the suite's time is measured on (README).
TEST_WORKERS ?= 2

.PHONY: setup run serve test browser postgres bench training-setup llama clean

setup: $(STAMP)

# pip byte-compiles the installed files (about 21,600) on one core; compileall does it on every core, 99 s -> 85 s for
# the whole setup (the .pyc files must exist: with PYTHONDONTWRITEBYTECODE set, a run would compile what it imports
# again in every process). A file that does not compile (torch's Python 3.12 test helper) is skipped, as pip skips it.
$(STAMP): requirements.txt requirements-nodeps.txt embedded/provision.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-compile -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-compile --no-deps -r requirements-nodeps.txt
	$(BIN)/python -c "import compileall, sysconfig; compileall.compile_dir(sysconfig.get_path('purelib'), quiet=2, workers=0)"
	$(BIN)/python -m embedded.provision
	touch $@

run: setup
	$(BIN)/python -m streamlit run app.py --server.address $(HOST) --server.port $(PORT) \
		--server.headless true --browser.gatherUsageStats false

# The guard as an OpenAI-compatible server (POST /v1/chat/completions): the embedded bot and detector by default.
serve: setup
	$(BIN)/python -m serve --host $(HOST) --port $(SERVE_PORT) $(SERVE_ARGS)

# Debian's chromium drives the browser tests (Playwright never downloads a browser here).
browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
		|| echo "could not install chromium: the browser tests will be skipped"; \
	else echo "chromium not found and not root: the browser tests will be skipped"; fi

# Debian's PostgreSQL for the goading studio's database tests (a throwaway server per test run).
postgres:
	@if ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || command -v pg_ctl >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
		|| echo "could not install postgresql: the PostgreSQL tests will be skipped"; \
	else echo "postgresql not found and not root: the PostgreSQL tests will be skipped"; fi

test: setup browser postgres
	$(BIN)/python -m ruff check .
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

bench: setup
	$(BIN)/python -m embedded.provision --snli
	@echo "see docs/benchmarks.md for each benchmark's command"

# Training: the mpnet base (installed by setup from requirements-nodeps.txt) unpacked, and SNLI.
training-setup: setup
	$(BIN)/python -c "import embedded; print('all-mpnet-base-v2:', embedded.mpnet_path())"
	$(BIN)/python -m embedded.provision --snli

# Optional: llama.cpp's server with parallel slots, compiled from the llama-cpp-python sdist for AVX2 (not this CPU's
# own instructions) with its server tool and without its web UI (which it would download); about 15 min on 2 cores.
# The remote bot in front of it: docs/deploy.md.
llama: setup
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_TOOLS_INSTALL=ON -DLLAMA_BUILD_SERVER=ON \
		-DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
		CMAKE_BUILD_PARALLEL_LEVEL=2 $(BIN)/python -m pip install --no-cache-dir --no-binary llama-cpp-python -r requirements-llama.txt

clean:
	rm -rf $(VENV)
