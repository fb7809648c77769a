# Two commands do everything on a fresh machine:
#   make demo   - the main job: Deep CFR on Kuhn poker, exact exploitability, PNG (~10 s on 2 cores)
#   make test   - the test suite over 2 pytest-xdist workers (slow tier excluded; `make test-slow` runs it)
# Both create ./.venv and install the pinned dependencies (constraints.txt) on first use.
# Also: make demo-tabular, make bench (quick tier of the benchmark suite, <= 30 min on 2 cores),
# make bench-full (the committed settings, hours), make docs (strict mkdocs build into site/),
# make wheel-check (builds the wheel, installs it in a fresh venv, runs it from outside the checkout).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PYTEST_WORKERS ?= 2

.PHONY: demo demo-tabular test test-slow bench bench-full docs wheel-check lint clean venv

venv: $(STAMP)

$(STAMP): setup.py constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test,ray,docs,tensorboard,explore]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/cfrx-deep-cfr --preset=kuhn_demo --iterations=40 --eval_every=10 --progress \
		--output_dir=out/demo

demo-tabular: $(STAMP)
	$(BIN)/cfrx-oftrl-cfr --game=leduc_poker --iterations=500 \
		--solvers=cfr,cfr+,dcfr,pcfr+,oftrl --stepsize_scales=1,1000000 \
		--openspiel_baselines=cpp_cfr --baseline_seconds=20 --output_dir=out/demo_tabular

test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup -m "not slow" tests

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup -m slow tests

bench: $(STAMP)
	PYTHONPATH=. $(BIN)/python benchmarks/suite.py --tier=quick

bench-full: $(STAMP)
	PYTHONPATH=. $(BIN)/python benchmarks/suite.py --tier=full

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

wheel-check: $(STAMP)
	bash .ci/wheel_check.sh

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .ruff_cache
