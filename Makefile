# Laya's entry points. `make demo` and `make test` run the idempotent bootstrap first, so on a
# fresh machine they are the only commands needed (see README.md).
SHELL := /bin/bash
CARGO ?= cargo
LAYA := target/release/laya

.PHONY: all bootstrap model pyref build demo test clean

all: build

bootstrap:
	@scripts/bootstrap.sh

# Only the default model (into $XDG_CACHE_HOME/laya/models).
model:
	@scripts/bootstrap.sh --model-only

# The Python MLX reference the parity tests compare against (.deps/pyref).
pyref: bootstrap
	@scripts/bootstrap-pyref.sh >/dev/null

build: bootstrap
	$(CARGO) build --release --locked

demo: build
	@scripts/demo.sh $(LAYA)

test: build pyref
	$(CARGO) test --release --locked --workspace

clean:
	$(CARGO) clean
	rm -rf .deps .cargo/config.toml
