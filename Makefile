# Two commands do all set-up on a fresh clone: `make demo` and `make test`.
# Both are idempotent: the virtualenv and the jars are made once and reused (pip and Maven cache downloads).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.installed
JARS_STAMP := jars/.fetched
PYTEST_ARGS ?=

.PHONY: demo test setup venv jars bench clean

demo: setup
	$(PY) -m harness.demo

test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

# Compile the numba kernels once into their on-disk cache, so that Spark's Python workers load them
# instead of each compiling them on its first task (fast when the cache is already there).
setup: venv jars
	$(PY) -c "from spark_kwire.protocol.records import warm_up; warm_up()"

venv: $(VENV_STAMP)
$(VENV_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# compat mode puts the checkout on sys.path, so Spark's scan of top-level pyspark_* modules finds pyspark_kwire
	$(PY) -m pip install -q -e '.[test]' --config-settings editable_mode=compat
	touch $@

jars: $(JARS_STAMP)
$(JARS_STAMP): jars/pom.xml jars/kafka/pom.xml jars/spark-kafka/pom.xml
	mvn -q -B -f jars/pom.xml dependency:copy-dependencies
	touch $@

bench: setup
	$(PY) benchmarks/read_throughput.py
	$(PY) benchmarks/write_throughput.py

clean:
	rm -rf $(VENV) jars/*/target $(JARS_STAMP)
