# parafuse: `make demo` and `make test` are all a fresh machine needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2

.PHONY: demo test lint venv bytecode clean bench-ccn bench-fsm bench-fsm-tokens bench-fsm-rulesets

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,cuda]'
	touch $(STAMP)

# An editable install is not byte-compiled, and where PYTHONDONTWRITEBYTECODE is set
# nothing ever is: each compiler start would compile the package's sources again (0.1 s).
# compileall skips what is up to date.
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q -j $(JOBS) __init__.py cli grammar ccn_compiler \
		fsm_compiler emitters tests

demo: bytecode
	$(BIN)/python -m parafuse.cli.demo

test: bytecode
	$(BIN)/python -m pytest -q -n $(JOBS) -p no:cacheprovider tests

# Benchmarks (not tests): torch and matplotlib are installed for them only.
bench-ccn: $(STAMP)
	$(BIN)/python -m pip install -q torch==2.13.0 matplotlib
	$(BIN)/python bench/ccn_cpu.py
	$(BIN)/python bench/ccn_cpu_python.py

bench-fsm: $(STAMP)
	$(BIN)/python -m pip install -q matplotlib
	$(BIN)/python bench/fsm_schemes.py
	$(BIN)/python bench/fsm_simd.py
	$(BIN)/python bench/fsm_simd_paths.py
	$(BIN)/python bench/fsm_simd_kernel.py
	$(BIN)/python bench/fsm_auto_corpus.py

# flex and re2c are the benchmark's competitors, not the product's dependencies.
bench-fsm-tokens: $(STAMP)
	command -v flex >/dev/null && command -v re2c >/dev/null || \
	  (apt-get update -q && apt-get install -y -q flex re2c)
	$(BIN)/python bench/fsm_tokens.py

# Hyperscan's C library is the rule-set benchmark's peer, not a product dependency.
bench-fsm-rulesets: $(STAMP)
	(test -f /usr/include/hs/hs.h && test -f /usr/share/uap-core/regexes.yaml) || \
	  (apt-get update -q && apt-get install -y -q libhyperscan-dev uap-core)
	$(BIN)/python bench/fsm_rulesets.py

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build .pytest_cache
