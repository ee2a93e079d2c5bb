# lard: the two commands a new machine needs are `make demo` and `make test`.
# Both install missing system prerequisites first (see `prereqs`).

SHELL := /bin/bash
CARGO ?= cargo
# cmake + libclang-dev: unicorn-engine-sys (bindgen); musl-tools: musl guests;
# clang: SDK portability check; qemu-user: `make bench`; pkg-config: SDK install test;
# valgrind: `make bench` measures the FastTrack cost (bench/ft_cost.py);
# patch: applies emu/unicorn-patches to unicorn's source (`make unicorn`);
# zlib1g-dev: `make bench` builds pigz (bench/pigz.py); pigz: Debian's binary
# is a row of bench/binary.py. gdb: tests/tests/gdb.rs drives it against
# `lard run --gdb` (docs/debugging.md). slurm-wlm + munge: tests/tests/campaign.rs
# runs a campaign as a job array on a private single-node Slurm cluster.
# nodejs + openjdk-17-jdk-headless: tests/tests/processes.rs runs node and java.
# man-db: tests/tests/cli_reference.rs renders the man pages `make install` writes.
# chromium: tests/tests/race_reports.rs renders `lard run --report-html` headless.
# golang-go: `lard go` and tests/tests/go.rs (Go programs as LARD programs, docs/go.md).
# npm (Debian's, where Node.js came without it): tests/tests/race_reports.rs
# installs the SARIF 2.1.0 schema and ajv from the npm registry to validate
# `lard run --sarif`.
APT_PACKAGES := man-db chromium cmake libclang-dev clang pkg-config gcc-12-plugin-dev musl-tools qemu-user ninja-build gcc g++ make python3 binutils valgrind pigz patch zlib1g-dev gdb slurm-wlm munge nodejs openjdk-17-jdk-headless golang-go
GUEST_BUILD := $(CURDIR)/target/guests

.PHONY: all prereqs unicorn build demo test lint bench clean install install-docs

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
	fi; \
	if ! command -v npm >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null \
	      || { echo "make: apt-get install failed for: npm" >&2; exit 1; }; \
	  else \
	    echo "make: run: sudo apt-get install -y npm" >&2; exit 1; \
	  fi; \
	fi

# The patched unicorn core (emu/unicorn-patches, docs/unicorn-patches.md):
# built once from the registry's unicorn-engine-sys source into
# target/unicorn/<hash of the series>; a no-op when the series is unchanged.
# Cargo refuses to build the emulator without it (.cargo/config.toml, emu/build.rs).
unicorn: prereqs
	CARGO="$(CARGO)" bash emu/unicorn-patches/build.sh

build: unicorn
	$(CARGO) build --release --workspace

# The bundled default: the SDK's multi-threaded race-free counter (locks
# reported through ReadVC/WriteVC) and its racy twin, built from source and
# run under the emulator with the LARDISH hardware model; then the asm guest
# that issues every LARDx86 op, disassembled.
demo: build
	@mkdir -p $(GUEST_BUILD)
	$(MAKE) -s -C guest-sdk BUILD=$(GUEST_BUILD)
	gcc -static -O2 -g -pthread -I guest-sdk/include -o $(GUEST_BUILD)/locked_counter guests/c/basic/locked_counter.c -L$(GUEST_BUILD) -llard
	gcc -static -O2 -g -pthread -I guest-sdk/include -o $(GUEST_BUILD)/racy_counter guests/c/basic/racy_counter.c -L$(GUEST_BUILD) -llard
	gcc -static -nostdlib -I guest-sdk/include -o $(GUEST_BUILD)/lard_ops guests/asm/lard_ops.S
	@echo "== lard run --detector lardish --stats --hw-stats locked_counter =="
	./target/release/lard run --detector lardish --stats --hw-stats $(GUEST_BUILD)/locked_counter
	@echo "== lard run racy_counter (FastTrack) =="
	./target/release/lard run $(GUEST_BUILD)/racy_counter
	@echo "== lard disasm --symbol _start lard_ops =="
	./target/release/lard disasm $(GUEST_BUILD)/lard_ops --symbol _start

lint: unicorn
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# g++ on top of the prerequisites: tests/tests/sdk_install.rs compile-tests
# lard.h and an installed-SDK consumer as C++ (clang++ comes with clang).
test: lint
	$(CARGO) build --workspace --bins
	$(CARGO) test --workspace

clean:
	$(CARGO) clean

# make install PREFIX=/opt/lard [DESTDIR=...]: bin/lard, bin/lard-cc,
# bin/lard-c++, bin/lard-rustc, include/lard.h, include/lardx86.inc, lib/liblard.a,
# lib/liblardcc.a, lib/liblardcc_omp.a, the --wrap lists, the gcc plugin
# lib/lardcc_omp.so, lib/pkgconfig/lard.pc, man pages in share/man/man1
# and the documentation in share/doc/lard (install-docs).
PREFIX ?= /usr/local
DESTDIR ?=
install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 target/release/lard $(DESTDIR)$(PREFIX)/bin/lard
	$(MAKE) -s -C guest-sdk install-cc BUILD=$(CURDIR)/target/sdk-build PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) CC=gcc
	python3 guest-sdk/tools/help2man.py $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(CURDIR)/target/sdk-build/lard-cc $(CURDIR)/target/sdk-build/lard-rustc
	$(MAKE) -s install-docs

# A man page per lard command and subcommand (`lard manpages`: clap_mangen
# from the clap definitions), README.md and docs/ in share/doc/lard, which
# the pages name. LARD: the lard binary that writes the pages.
LARD ?= target/release/lard
install-docs:
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/doc/lard/docs
	install -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/lard/README.md
	install -m 644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/lard/docs/
	$(LARD) manpages $(DESTDIR)$(PREFIX)/share/man/man1 --docs $(PREFIX)/share/doc/lard

# Wall-time ratios of lard vs native and qemu-user (bench/README.md).
# BENCH_SCALE=N for longer runs, BENCH_REPS=K for more repetitions.
bench: unicorn
	CARGO="$(CARGO)" python3 bench/run.py
	CARGO="$(CARGO)" python3 bench/sites.py
	python3 bench/pigz.py
	python3 bench/emulation.py
	python3 bench/fp.py
	python3 bench/binary.py
	python3 bench/real_programs.py
	CARGO="$(CARGO)" python3 bench/detectors.py
	python3 bench/lardcc.py
	python3 bench/omp_iterations.py
	CARGO="$(CARGO)" python3 bench/ft_cost.py
	CARGO="$(CARGO)" python3 bench/lardish_table.py
	CARGO="$(CARGO)" python3 bench/adversarial.py
	CARGO="$(CARGO)" python3 bench/processes.py
	python3 bench/debugging.py
	python3 bench/explore.py
	python3 bench/go.py
	CARGO="$(CARGO)" python3 bench/rust.py
	python3 bench/debian_rust.py
	python3 bench/threads.py
