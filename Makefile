# Two commands do everything on a fresh machine:
#   make demo   - the main job: Deep CFR on Kuhn poker, exact exploitability, PNG
#   make demo-tabular - CFR family + OFTRL-CFR on Leduc vs OpenSpiel's C++ CFR
#   make test   - the test suite (slow tests excluded; `make test-slow` runs them)
# Both create ./.venv and install the pinned dependencies (constraints.txt) on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo demo-tabular test test-slow lint clean venv

venv: $(STAMP)

$(STAMP): setup.py constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test,ray]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/deep_cfr.py --game=kuhn_poker --iterations=40 --traversals=2000 \
		--advantage_steps=100 --policy_steps=500 --layers=32,32 --eval_every=10 --progress \
		--output_dir=out/demo

demo-tabular: $(STAMP)
	$(BIN)/python examples/oftrl_cfr.py --game=leduc_poker --iterations=500 \
		--solvers=cfr,cfr+,dcfr,pcfr+,oftrl --stepsize_scales=1,1000000 \
		--openspiel_baselines=cpp_cfr --baseline_seconds=20 --output_dir=out/demo_tabular

test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" tests

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow tests

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
