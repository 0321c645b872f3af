# modforge build pipeline.
#
# Needs only Python >= 3.11 (with venv), a Rust toolchain (cargo) and a C
# compiler.  Everything else comes from PyPI and crates.io into .venv/ and
# native/target/.
#
#   make            same as `make setup`
#   make setup      .venv + dev tools + the package in development mode
#   make test       cargo unit tests (IFMA emulated on AVX-512 CPUs without
#                   it), then pytest on 2 workers
#                   (test-native / test-python: one half only)
#   make demo       .venv/bin/modforge demo
#   make bench      .venv/bin/modforge bench
#   make clean      remove .venv, build outputs and the built extension
#
# Stamps under .venv/ make a repeated `make test` rebuild nothing unless an
# input changed:
#   .venv/.stamp-deps    <- requirements/dev.txt, pyproject.toml
#   .venv/.stamp-native  <- the deps stamp, pyproject.toml, and every file of the
#                           Cargo workspace under native/ (manifests, lock,
#                           sources, build scripts) outside native/target
# The package is installed editable: python/ edits take effect at once.

PYTHON ?= python3
CARGO ?= cargo
PYTEST_WORKERS ?= 2

VENV := .venv
BIN := $(VENV)/bin
VENV_PY := $(BIN)/python
DEPS_STAMP := $(VENV)/.stamp-deps
NATIVE_STAMP := $(VENV)/.stamp-native

# Every crate of the workspace: a new crate under native/crates/ is tracked without an edit here.
NATIVE_SOURCES := native/Cargo.lock $(shell find native -path native/target -prune -o \( -name '*.rs' -o -name Cargo.toml \) -print 2>/dev/null)
NATIVE_MANIFEST := native/Cargo.toml

# A stamp without the built extension next to the Python sources (deleted by
# hand, say) must not count: force the rebuild.
ifeq ($(wildcard python/modforge/_native*.so),)
NATIVE_FORCE := FORCE
endif

PIP := $(VENV_PY) -m pip --disable-pip-version-check

.DEFAULT_GOAL := setup
.PHONY: setup test test-native test-python test-aarch64 demo bench bench-hw clean FORCE

setup: $(NATIVE_STAMP)

$(VENV_PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "modforge needs Python >= 3.11, $(PYTHON) is " + sys.version.split()[0])'
	@$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "error: '$(PYTHON) -m venv' failed. On Debian/Ubuntu the venv module is a separate package (python3-venv)." >&2; \
	  exit 1; }

$(DEPS_STAMP): requirements/dev.txt pyproject.toml | $(VENV_PY)
	$(PIP) install -q -r requirements/dev.txt
	@touch $@

$(NATIVE_STAMP): $(DEPS_STAMP) pyproject.toml $(NATIVE_SOURCES) $(NATIVE_FORCE)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH $(BIN)/maturin develop --release
	@test -x $(BIN)/modforge || { echo "error: $(BIN)/modforge was not installed" >&2; exit 1; }
	@touch $@

# The Rust tests of every crate (doc tests included).  On AVX-512 CPUs without
# IFMA (Skylake-SP, Cascade Lake: most cloud Xeons) they run with IFMA's two
# instructions emulated (native/crates/modforge-ring/src/ifma_emulated.rs), so
# that the IFMA kernels are tested there too
# and not skipped; elsewhere with the ci-test profile (native/Cargo.toml:
# release optimisation without whole-program LTO, which made every test
# binary redo the code generation of the ring's generated kernels).  (The Python extension is a
# separate build, always the release one.)  `-- --show-output` prints what
# libtest would hide: the line of each kernel test skipped on this CPU and the
# summary of the backends the Rust tests ran on.
IFMA_EMULATED := $(shell grep -qw avx512f /proc/cpuinfo 2>/dev/null && ! grep -qw avx512ifma /proc/cpuinfo && echo yes)
ifeq ($(IFMA_EMULATED),yes)
NATIVE_TEST_FLAGS := --profile test-emulated --features modforge-ring/ifma-emulated
else
NATIVE_TEST_FLAGS := --profile ci-test
endif

test: setup
	$(CARGO) test --workspace $(NATIVE_TEST_FLAGS) --quiet --manifest-path $(NATIVE_MANIFEST) -- --show-output
	$(VENV_PY) -m pytest -n $(PYTEST_WORKERS) -q tests

test-native: setup
	$(CARGO) test --workspace $(NATIVE_TEST_FLAGS) --quiet --manifest-path $(NATIVE_MANIFEST) -- --show-output

test-python: setup
	$(VENV_PY) -m pytest -n $(PYTEST_WORKERS) -q tests

# The Rust tests cross-built for aarch64 and run under qemu-user (docs/native.md,
# "Other CPUs: aarch64"; about 20 minutes on 2 cores).  Not part of `make test`.
test-aarch64:
	sh native/test-aarch64.sh

demo: setup
	$(BIN)/modforge demo

bench: setup
	$(BIN)/modforge bench vdf
	$(BIN)/modforge bench rsa
	$(BIN)/modforge bench ntt
	$(BIN)/modforge bench msm

# Not in CI: 1024-bit designs verilate in minutes and synthesise hierarchically for about an hour.
bench-hw: setup
	$(BIN)/modforge hw bench
	$(BIN)/modforge hw report ozturk --bits 1024 --modulus vdf-alliance --method hierarchical
	$(BIN)/modforge hw report predictive-montgomery --bits 1024 --modulus vdf-alliance --method hierarchical
	$(BIN)/modforge hw sim pam-mpu --bits 512 --vectors 10000
	$(BIN)/modforge hw report pam-mpu --bits 256
	$(VENV_PY) -m modforge.hw.ntt_bench
	$(VENV_PY) -m modforge.hw.ntt_report
	$(BIN)/modforge hw sim fq-mul --vectors 10000
	$(BIN)/modforge hw sim msm-adder --vectors 1000
	$(BIN)/modforge hw sim msm-controller --opt adder=edwards --opt adder_modulus=0xd041445db6844b37 \
	  --opt karatsuba_depth=1 --opt windows=4 --opt window_bits=3 --vectors 1200
	$(BIN)/modforge hw sim msm-controller --opt adder=edwards --opt windows=26 --opt window_bits=0 --vectors 16384 \
	  --cxx-opt -O1
	$(BIN)/modforge hw report fq-mul
	$(BIN)/modforge hw sim hybrid --bits 1024 --vectors 10000 --chain 100
	$(BIN)/modforge hw sim hybrid --bits 2048 --vectors 10000 --chain 100
	$(BIN)/modforge hw report hybrid --bits 256 --target both --method flat

clean:
	rm -rf $(VENV) native/target target build dist .pytest_cache .hypothesis .cache/modforge-hw
	find python -name '_native*.so' -delete
	find . -path ./.git -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

FORCE:
