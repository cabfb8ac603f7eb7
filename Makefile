# uir's developer commands. `make demo` and `make test` install what is
# missing (Debian packages, .venv, an editable build) and then run; both are
# idempotent, and a second run with nothing changed compiles nothing.

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
ASAN_VENV ?= .venv-asan
# Persistent CMake build trees; {wheel_tag} keeps Python versions apart.
BUILD_DIR ?= build/{wheel_tag}
ASAN_BUILD_DIR ?= build/asan-{wheel_tag}
PYTEST_ARGS ?=

export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

# Everything the C++ build reads; any change to these reinstalls the extension.
CORE_INPUTS := CMakeLists.txt pyproject.toml $(shell find csrc -type f 2>/dev/null)

SYSTEM_STAMP := build/.system-deps
DEPS_STAMP := $(VENV)/.uir-deps
BUILD_STAMP := $(VENV)/.uir-build
ASAN_STAMP := $(ASAN_VENV)/.uir-build

.PHONY: all demo test test-xla runtime-only gpu-artifacts bench bench-quick bench-deps asan fuzz fuzz-eval fuzz-compile fuzz-build lint format system-deps build clean distclean help

all: test

help:
	@echo "make demo    install what is missing, build, run 'uir demo'"
	@echo "make test    install what is missing, build, run the test suite"
	@echo "make test-xla  install JAX (jaxlib's XLA:CPU) and compare uir with XLA"
	@echo "make bench   the benchmark suite: uir beside NumPy, JAX and IREE (results in benchmarks/results)"
	@echo "make bench-quick  the small cases of the suite (under 3 minutes)"
	@echo "make asan    build with ASan+UBSan in $(ASAN_VENV) and run the tests there"
	@echo "make fuzz    run the HLO parser fuzzer for FUZZ_SECONDS (default 600)"
	@echo "make fuzz-eval  run the parse/verify/print/evaluate fuzzer for FUZZ_SECONDS"
	@echo "make fuzz-compile  compile mutated corpus modules and compare with the evaluator for FUZZ_SECONDS"
	@echo "make gpu-artifacts  serialize the GPU check's executables into build/gpu (for tools/gpu_check.sh)"
	@echo "make lint    ruff, clang-format and clang-tidy checks"
	@echo "make format  apply ruff format and clang-format"

demo: $(BUILD_STAMP)
	$(VENV)/bin/uir demo

test: $(BUILD_STAMP) fuzz-build runtime-only
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

# The runtime-only build (runtime_only/): what runs serialized GPU
# executables, with CMake and a C++ compiler only (no LLVM, no pybind11).
RUNTIME_ONLY_DIR := build/runtime-only
runtime-only: $(DEPS_STAMP)
	@[ -f $(RUNTIME_ONLY_DIR)/Makefile ] || $(VENV)/bin/cmake -S runtime_only -B $(RUNTIME_ONLY_DIR) \
	    -DCMAKE_BUILD_TYPE=Release >/dev/null
	@$(VENV)/bin/cmake --build $(RUNTIME_ONLY_DIR) --parallel 2 >$(RUNTIME_ONLY_DIR)/build.log 2>&1 \
	    || { cat $(RUNTIME_ONLY_DIR)/build.log; exit 1; }

# The GPU check's executables, compiled here and serialized into build/gpu
# for tools/gpu_check.sh on a machine with a GPU.
gpu-artifacts: $(BUILD_STAMP)
	$(VENV)/bin/python tools/gpu_artifacts.py build/gpu

# XLA:CPU as a second oracle: the tests marked `xla`, with jax[cpu] from PyPI.
test-xla: $(BUILD_STAMP)
	$(VENV)/bin/python -c "import jax" 2>/dev/null || $(VENV)/bin/python -m pip install -q "jax[cpu]"
	$(VENV)/bin/python -m pytest -m xla -rfEsx $(PYTEST_ARGS)

# The benchmark extra: JAX (XLA:CPU) and IREE beside uir, matplotlib for the plot.
bench-deps: $(BUILD_STAMP)
	$(VENV)/bin/python -c "import jax, matplotlib, tqdm, iree.compiler, iree.runtime" 2>/dev/null || \
	    $(VENV)/bin/python -m pip install -q "jax[cpu]" iree-base-compiler iree-base-runtime matplotlib tqdm

bench: bench-deps
	$(VENV)/bin/python benchmarks/run.py $(BENCH_ARGS)

bench-quick: bench-deps
	$(VENV)/bin/python benchmarks/run.py --quick $(BENCH_ARGS)

build: $(BUILD_STAMP)

system-deps: $(SYSTEM_STAMP)

# Re-checked whenever the script changes; the script itself is a no-op when
# every package is present.
$(SYSTEM_STAMP): tools/install_system_deps.sh
	tools/install_system_deps.sh
	@mkdir -p $(@D) && touch $@

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(DEPS_STAMP): pyproject.toml tools/python_deps.py | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q $$($(VENV)/bin/python tools/python_deps.py)
	@touch $@

# Editable install: Python files are used from uir/ in place; the extension is
# built in $(BUILD_DIR), which persists, so only changed C++ recompiles.
$(BUILD_STAMP): $(SYSTEM_STAMP) $(DEPS_STAMP) $(CORE_INPUTS)
	$(VENV)/bin/python -m pip install -q --no-build-isolation --no-deps \
	    -Cbuild-dir=$(BUILD_DIR) -e .
	@ln -sf "$$(ls build/cp*/compile_commands.json | head -1)" compile_commands.json
	@touch $@

# The HLO parser fuzzer (libFuzzer + ASan + UBSan, built with clang), seeded
# with XLA's corpus. The test suite runs it briefly; `make fuzz` runs it long.
FUZZ_DIR := build/fuzz
FUZZER := $(FUZZ_DIR)/hlo_parser_fuzzer
EVAL_FUZZER := $(FUZZ_DIR)/hlo_eval_fuzzer
FUZZ_SECONDS ?= 600
CORPUS_DIR ?= ../shared/corpus/xla-hlo

fuzz-build: $(SYSTEM_STAMP) $(DEPS_STAMP)
	@[ -f $(FUZZ_DIR)/build.ninja ] || cmake -S tools/fuzz -B $(FUZZ_DIR) -G Ninja \
	    -DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(FUZZ_DIR) --parallel 2 >$(FUZZ_DIR)/build.log 2>&1 \
	    || { cat $(FUZZ_DIR)/build.log; exit 1; }
	@test -x $(FUZZER) && test -x $(EVAL_FUZZER)

fuzz: fuzz-build
	mkdir -p $(FUZZ_DIR)/corpus
	$(FUZZER) -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus $(CORPUS_DIR)

# The structure-aware fuzzer: mutates corpus modules (dimensions, types,
# layouts, attributes, operands, nesting) and drives each through parse,
# verify, print, clone and evaluate.
fuzz-eval: fuzz-build
	mkdir -p $(FUZZ_DIR)/eval-corpus
	$(EVAL_FUZZER) -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/eval-corpus $(CORPUS_DIR)

# The differential compile fuzzer: mutants of the corpus that the evaluator
# runs go through uir.compile and the checked pipeline too, and must agree.
# Findings land in $(FUZZ_DIR)/compile as .hlo files.
fuzz-compile: $(BUILD_STAMP)
	$(VENV)/bin/python tools/fuzz_compile.py --seconds $(FUZZ_SECONDS) --corpus $(CORPUS_DIR) \
	    --out $(FUZZ_DIR)/compile

# The same build with AddressSanitizer and UndefinedBehaviorSanitizer, in its
# own venv. Python itself is not instrumented, so the ASan runtime is preloaded
# and leak checking is off (the interpreter keeps objects alive at exit).
$(ASAN_VENV)/bin/python:
	$(PYTHON) -m venv $(ASAN_VENV)

$(ASAN_STAMP): $(SYSTEM_STAMP) $(CORE_INPUTS) | $(ASAN_VENV)/bin/python
	$(ASAN_VENV)/bin/python -m pip install -q --upgrade pip
	$(ASAN_VENV)/bin/python -m pip install -q $$($(ASAN_VENV)/bin/python tools/python_deps.py)
	PATH=$(CURDIR)/$(ASAN_VENV)/bin:$$PATH $(ASAN_VENV)/bin/python -m pip install -q \
	    --no-build-isolation --no-deps -Cbuild-dir=$(ASAN_BUILD_DIR) \
	    -Ccmake.build-type=Debug -Ccmake.define.UIR_SANITIZE=ON -e .
	@touch $@

asan: $(ASAN_STAMP)
	PATH=$(CURDIR)/$(ASAN_VENV)/bin:$$PATH \
	LD_PRELOAD="$$(g++ -print-file-name=libasan.so) $$(g++ -print-file-name=libubsan.so)" \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_init_order=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	UIR_TEST_MAX_EXAMPLES=$${UIR_TEST_MAX_EXAMPLES:-10} \
	    $(ASAN_VENV)/bin/python -m pytest -p no:cacheprovider $(PYTEST_ARGS)

CXX_FILES = $$(find csrc -name '*.h' -o -name '*.cc')

# clang-tidy reads the compile commands of the persistent build.
lint: $(BUILD_STAMP)
	tools/install_system_deps.sh clang-format-19 clang-tidy-19
	$(VENV)/bin/ruff check uir tests benchmarks tools runtime_only
	$(VENV)/bin/ruff format --check uir tests benchmarks tools runtime_only
	clang-format-19 --dry-run --Werror $(CXX_FILES)
	run-clang-tidy-19 -quiet -p "$$(dirname "$$(ls build/cp*/compile_commands.json | head -1)")" \
	    '$(CURDIR)/csrc/.*[.]cc$$'


format: $(DEPS_STAMP)
	tools/install_system_deps.sh clang-format-19
	$(VENV)/bin/ruff format uir tests benchmarks tools
	$(VENV)/bin/ruff check --fix uir tests benchmarks tools
	clang-format-19 -i $(CXX_FILES)

clean:
	rm -rf build $(BUILD_STAMP) $(ASAN_STAMP)

distclean: clean
	rm -rf $(VENV) $(ASAN_VENV)
