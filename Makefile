# Laya's entry points. `make demo` and `make test` run the idempotent bootstrap first, so on a
# fresh machine they are the only commands needed (see README.md).
SHELL := /bin/bash
CARGO ?= cargo
LAYA := target/release/laya

.PHONY: all bootstrap pinyin model pyref bench-peers spell-peers build demo test lint bench stress clean lexicon extension-zed extension-vscode

all: build

bootstrap:
	@scripts/bootstrap.sh
	@scripts/lexicon.sh
	@scripts/pinyin.sh

# Only the lexicon (.deps/lexicon/en.tsv; see data/README.md).
lexicon:
	@scripts/lexicon.sh

# Only the pinyin dictionary (.deps/pinyin/zh.tsv; see data/README.md).
pinyin:
	@scripts/pinyin.sh

# Only the models: SmolLM2 (the default) and Gemma 3 270M (into $XDG_CACHE_HOME/laya/models).
model:
	@scripts/bootstrap.sh --model-only

# The Python MLX reference the parity tests compare against (.deps/pyref).
pyref: bootstrap
	@scripts/bootstrap-pyref.sh >/dev/null

# llama.cpp (llama-cpp-python 0.3.16 built from source, ~4 min once) for `laya bench`'s peers.
bench-peers: pyref
	@LAYA_JOBS=$${LAYA_JOBS:-2} tests/reference/build-llamacpp.sh >/dev/null

# GNU Aspell, Hunspell, Harper and CSpell for `laya eval --peer` (.deps/peers; Debian packages).
spell-peers:
	@scripts/spell-peers.sh

build: bootstrap
	$(CARGO) build --release --locked

demo: build
	@scripts/demo.sh $(LAYA)

test: build pyref bench-peers spell-peers
	@scripts/test-deps.sh
	$(CARGO) test --release --locked --workspace
	@scripts/test-zed-extension.sh
	@scripts/test-vscode-extension.sh

# Formatting (rustfmt.toml) and Clippy over every crate and target, warnings as errors (not part
# of `make test`: a newer toolchain's new lints should not fail a build).
lint: bootstrap
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --locked --workspace --all-targets -- -D warnings

# The VS Code extension: build and package the .vsix, then the real-editor test (code-server in
# headless chromium; screenshots in target/vscode-test-artifacts/).
extension-vscode:
	@scripts/test-vscode-extension.sh

# The Zed extension (wasm32-wasip1 and wasip2 builds, export checks).
extension-zed:
	@scripts/test-zed-extension.sh

# The full benchmark beside llama.cpp and MLX-Python (~15 min): bench.json, bench.svg.
stress: build
	$(LAYA) stress --minutes $${MINUTES:-10} --out stress.json

bench: build bench-peers
	$(LAYA) bench --out bench.json --svg bench.svg

clean:
	$(CARGO) clean
	rm -rf .deps .cargo/config.toml
