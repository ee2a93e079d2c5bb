# lard: the two commands a new machine needs are `make demo` and `make test`.
# Both install missing system prerequisites first (see `prereqs`).

SHELL := /bin/bash
CARGO ?= cargo
# cmake + libclang-dev: unicorn-engine-sys (bindgen); musl-tools: musl guests;
# clang: SDK portability check; qemu-user: `make bench`; pkg-config: SDK install test.
APT_PACKAGES := cmake libclang-dev clang pkg-config musl-tools qemu-user ninja-build gcc make python3
GUEST_BUILD := $(CURDIR)/target/guests

.PHONY: all prereqs build demo test lint bench clean

all: build

prereqs:
	@missing=""; \
	for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make: installing system prerequisites:$$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
	      || { echo "make: apt-get install failed for:$$missing" >&2; exit 1; }; \
	  else \
	    echo "make: missing system packages:$$missing" >&2; \
	    echo "make: run: sudo apt-get install -y$$missing" >&2; exit 1; \
	  fi; \
	fi

build: prereqs
	$(CARGO) build --release --workspace

# The bundled default: a guest that issues every LARDx86 op, built from source,
# run natively (the ops are harmless there) and disassembled by `lard`.
demo: build
	@mkdir -p $(GUEST_BUILD)
	gcc -static -nostdlib -I guest-sdk/include -o $(GUEST_BUILD)/lard_ops guests/asm/lard_ops.S
	@echo "== native run (LARDx86 ops are NOPs on this CPU) =="
	$(GUEST_BUILD)/lard_ops
	@echo "== lard disasm --symbol _start =="
	./target/release/lard disasm $(GUEST_BUILD)/lard_ops --symbol _start

lint: prereqs
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

test: lint
	$(CARGO) build --workspace --bins
	$(CARGO) test --workspace

clean:
	$(CARGO) clean
