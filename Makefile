# Two commands do all set-up on a fresh clone: `make demo` and `make test`; `make dist` makes and checks the
# release's files.
# Both are idempotent: the virtualenvs, the wheel and the jars are made once and reused (uv and Maven cache
# downloads), and re-made only when their inputs change.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.installed
JARS_STAMP := jars/.fetched
PYTEST_ARGS ?=

# The release matrix: .venv runs the newest PySpark (whatever pyproject's [test] extra resolves to, 4.3 today)
# and the whole suite; each older release gets its own virtualenv with kwire installed from the built wheel
# (not the checkout) and runs the Spark-facing tests. Latest patch of each line, as PyPI serves them.
OLDER_SPARK_RELEASES ?= 4.0.5 4.1.4 4.2.1
# Spark-facing tests run on every release: batch read and write, streaming, registration, Connect, notebooks,
# exactly-once streams, Kerberos (keytab, ticket cache, errors; the gssapi binding built in each virtualenv),
# typed (Avro) reads, writes and streams, Protobuf and JSON Schema reads and writes, SQL views and catalog tables,
# the example pipeline run once under spark-pipelines (4.1+; on 4.0 its absence is checked; its second run and
# full refresh, and plain JSON's schema evolution over Spark Connect, in the newest release's suite only).
RELEASE_TESTS ?= tests/spark/test_spark_releases.py tests/spark/test_registration.py \
	tests/spark/test_spark_connect.py::test_kwire_over_spark_connect_without_any_jar \
	tests/spark/test_spark_connect.py::test_typed_avro_over_spark_connect_without_any_jar \
	tests/spark/test_spark_connect.py::test_the_check_table_over_spark_connect tests/spark/test_check_table.py \
	tests/test_notebooks.py::test_quickstart_notebook_runs \
	tests/test_notebooks.py::test_databricks_notebook_runs tests/spark/test_exactly_once_stream.py \
	tests/spark/test_kerberos_spark.py tests/spark/test_typed_releases.py tests/spark/test_sql_views.py \
	tests/spark/test_pipeline.py::test_the_example_pipeline_writes_each_record_once \
	tests/spark/test_pipeline.py::test_without_pipelines_the_release_that_brings_them_is_named
# The whole suite runs in this many pytest-xdist workers, each with its own broker and Spark session (test
# files stay whole on one worker, so their module fixtures are made once). The suite mostly waits on brokers
# and Spark, not on the CPU: measured on 2 cores, see .ci/test-matrix.
TEST_WORKERS ?= 2
# The test virtualenvs hold pandas 2 (PySpark warns on pandas 3; kwire itself needs no pandas). Users' environments
# may hold pandas 3: .venv-pandas3 runs RELEASE_TESTS on the newest PySpark with it, from the wheel.
TEST_PANDAS := pandas<3
VERSION := $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' spark_kwire/_version.py)
WHEEL := dist/spark_kwire-$(VERSION)-py3-none-any.whl
SDIST := dist/spark_kwire-$(VERSION).tar.gz
PACKAGE_SOURCES := pyproject.toml MANIFEST.in README.md LICENSE pyspark_kwire.py $(shell find spark_kwire -name '*.py')
# What `make test` runs in the background beside the newest release's whole suite, from one queue (.ci/test-matrix).
BACKGROUND_RUNS := dist $(addprefix test-release-,$(OLDER_SPARK_RELEASES)) test-pandas3

.PHONY: demo test test-newest test-releases test-pandas3 setup system-packages venv jars wheel dist release-venvs \
	bench bench-releases clean

demo: setup
	$(PY) -m harness.demo

# The whole matrix at once: `make dist`, the older releases' runs and the pandas 3 run in the background (their
# output in .kwire/logs, printed at the end), the newest release's whole suite in the foreground. Fails if any
# run fails. The background runs' virtualenvs are made beside them (VIRTUALENVS), so that on a fresh clone their
# installs overlap the suites instead of delaying every run.
test: setup
	PYTEST_ARGS='$(PYTEST_ARGS)' VIRTUALENVS='$(RELEASE_VENVS) .venv-pandas3/.installed' \
	  bash .ci/test-matrix $(BACKGROUND_RUNS)

test-newest: setup
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# Compile the numba kernels once into their on-disk cache, so that Spark's Python workers load them instead of
# each compiling them on its first task (fast when the cache is already there). The tests' brokers, Kafka tools
# and Spark drivers load their classes from class-data-sharing archives made here once per JDK and jar set
# (harness/jvm.py). Byte-compile the checkout too (only what changed): where PYTHONDONTWRITEBYTECODE is set, as
# on the CI machine, no process writes a .pyc, and each process compiles the kwire modules it imports (importing
# every one: 1.41 CPU-s without .pyc, 0.97 with; over a whole CI run the difference did not show beside
# run-to-run variation).
setup: system-packages venv jars wheel
	$(PY) -m compileall -q spark_kwire harness tests pyspark_kwire.py > /dev/null
	$(PY) -c "from spark_kwire.protocol.records import warm_up; warm_up()"
	$(PY) -c "from spark_kwire.formats.warmup import warm_up; warm_up()"
	$(PY) -c "from harness.jvm import dump_class_archives; dump_class_archives()"

# The Debian packages beyond Python, Java and Maven (MIT Kerberos: the tests' KDC, kinit, and the headers PyPI's
# gssapi compiles against), installed only when missing: see .ci/system-packages.
system-packages:
	bash .ci/system-packages

venv: $(VENV_STAMP)
# order-only: the packages must be there before gssapi is built, but do not make the virtualenv again. uv (.ci/uv,
# installed on first use) links the wheels from its cache where pip would unpack them again; PySpark and gssapi,
# which PyPI serves only as source, come built from .ci/source-wheels. pip goes in too, for anyone's `python -m pip`
# in the virtualenv.
$(VENV_STAMP): pyproject.toml | system-packages
	test -x $(PY) || bash .ci/uv venv -q --python "$$($(PYTHON) -c 'import sys; print(sys.executable)')" $(VENV)
	# compat mode puts the checkout on sys.path, so Spark's scan of top-level pyspark_* modules finds pyspark_kwire
	bash .ci/uv pip install -q --python $(PY) \
	  --find-links "$$(PYTHON=$(PYTHON) bash .ci/source-wheels pyspark gssapi)" \
	  pip -e '.[test]' '$(TEST_PANDAS)' -C editable_mode=compat
	touch $@

jars: $(JARS_STAMP)
$(JARS_STAMP): jars/pom.xml jars/kafka/pom.xml jars/spark-kafka/pom.xml jars/spark-kafka-4.2/pom.xml jars/spark-avro/pom.xml
	mvn -q -B -f jars/pom.xml dependency:copy-dependencies
	touch $@

# The release's two files as PyPI would get them: `python -m build` makes the sdist, then the wheel from the
# unpacked sdist (a file the sdist lacks is missing from the wheel too). The wheel is the one users install; the
# per-release virtualenvs and the Connect and notebook tests install it.
wheel: $(WHEEL)
$(WHEEL) $(SDIST) &: $(PACKAGE_SOURCES) | $(VENV_STAMP)
	rm -rf build dist/spark_kwire-*
	mkdir -p .kwire && $(PY) -m build --outdir dist . > .kwire/build.log 2>&1 || { cat .kwire/build.log; exit 1; }
	test -f $(WHEEL) && test -f $(SDIST)

# The release's files checked before an upload: their metadata as PyPI reads it (twine check), their contents
# (.ci/check-dist: the library alone in the wheel, LICENSE in both, the sdist whole), and the wheel installed with
# PySpark alone (no pandas, no test tools) into a virtualenv of its own, reading and writing a real broker.
dist: $(WHEEL) $(SDIST) $(JARS_STAMP) .venv-dist/.installed
	$(PY) -m twine --no-color check --strict $(SDIST) $(WHEEL)
	$(PY) .ci/check-dist $(SDIST) $(WHEEL)
	$(PY) .ci/smoke-dist .venv-dist

# .venv-dist: the wheel and the newest PySpark (the release .venv runs), nothing else; its kernels compiled on first
# use, as in a user's fresh install (the other virtualenvs get the checkout's compiled kernels: .ci/release-venv).
.venv-dist/.installed: pyproject.toml $(WHEEL)
	PYTHON=$(PYTHON) SEED_KERNEL_CACHE=no bash .ci/release-venv .venv-dist \
	  "pyspark==$$($(PY) -c 'import pyspark; print(pyspark.__version__)')" $(WHEEL) '' ''
	touch $@

# .venv-spark-X.Y: PySpark X.Y.Z, the test tools, and kwire from the wheel. Made once; the wheel is
# re-installed when it changes, the whole virtualenv when pyproject.toml or the release changes.
RELEASE_VENVS := $(foreach r,$(OLDER_SPARK_RELEASES),.venv-spark-$(basename $(r))/.installed-$(r))
release-venvs: $(RELEASE_VENVS)
define release_venv
.venv-spark-$(basename $(1))/.installed-$(1): pyproject.toml $(WHEEL)
	PYTHON=$(PYTHON) bash .ci/release-venv .venv-spark-$(basename $(1)) 'pyspark[connect]==$(1)' $(WHEEL) test \
	  '$(TEST_PANDAS)'
	touch $$@
endef
$(foreach r,$(OLDER_SPARK_RELEASES),$(eval $(call release_venv,$(r))))

# .venv-pandas3: the newest PySpark (the release .venv runs), pandas 3, the test tools and kwire from the wheel:
# an environment as users on pandas 3 have it. `make test` makes it in its background runs.
.venv-pandas3/.installed: pyproject.toml $(WHEEL)
	PYTHON=$(PYTHON) bash .ci/release-venv .venv-pandas3 \
	  "pyspark[connect]==$$($(PY) -c 'import pyspark; print(pyspark.__version__)')" $(WHEEL) test 'pandas>=3'
	touch $@

# Spark-facing tests per older release, one after the other (`make test` runs them at once).
test-releases: setup release-venvs
	set -e; for r in $(OLDER_SPARK_RELEASES); do $(MAKE) --no-print-directory test-release-$$r; done

# Tests against the wheel in a virtualenv: $(1) the virtualenv, $(2) what the run is called, $(3) the folder it
# runs in, $(4) the tests (RELEASE_TESTS when not given). The harness comes from the checkout (.kwire/harness-path
# holds only it, for PYTHONPATH); KWIRE_EXPECT_WHEEL makes the session fail if spark_kwire is imported from the
# checkout, in the driver or in Spark's Python workers. pytest's console script, unlike `python -m pytest`, adds
# no cwd to sys.path; the run's cwd is outside the checkout because Spark starts its Python workers with
# `python -m`, which puts the cwd first on their sys.path.
define run_release_tests
	@v=$(CURDIR)/$(1); test -x $$v/bin/pytest || { echo "$$v missing: make release-venvs"; exit 2; }; \
	  echo "=== $(2) ($$v): $(or $(4),$(RELEASE_TESTS))"; \
	  mkdir -p $(3) && cd $(3) && \
	  PYTHONPATH=$(CURDIR)/.kwire/harness-path KWIRE_EXPECT_WHEEL=1 $$v/bin/pytest -p no:cacheprovider \
	    --import-mode=importlib --rootdir=$(CURDIR) -c $(CURDIR)/pyproject.toml $(PYTEST_ARGS) \
	    $(addprefix $(CURDIR)/,$(or $(4),$(RELEASE_TESTS)))
endef

# One older release against the wheel in its virtualenv (made first when missing or out of date).
define release_tests
test-release-$(1): .venv-spark-$(basename $(1))/.installed-$(1)
	$$(call run_release_tests,.venv-spark-$(basename $(1)),PySpark $(1),.kwire/run-$(1))
endef
$(foreach r,$(OLDER_SPARK_RELEASES),$(eval $(call release_tests,$(r))))

# The Spark-facing tests once with pandas 3 on the newest PySpark, kwire from the wheel: the ones whose paths
# PySpark may take through pandas when it is there: batch and stream reads and writes (Spark's Python workers),
# typed columns (Arrow to Spark conversions), the quickstart notebook (toPandas). Not the rest of RELEASE_TESTS:
# the same reads and writes under transactions, Kerberos logins, SQL, the pipeline CLI and the Databricks
# notebook, none of which PySpark routes through pandas (all of RELEASE_TESTS passed with pandas 3.1.1 on PySpark
# 4.3.0, in 29 min on a busy machine, against 8 min for these); nor Spark Connect, whose tests run in a
# virtualenv of their own (with pandas 2) that the newest release's suite uses at the same time.
PANDAS3_TESTS := tests/spark/test_spark_releases.py tests/spark/test_registration.py \
	tests/spark/test_typed_releases.py tests/test_notebooks.py::test_quickstart_notebook_runs
test-pandas3: .venv-pandas3/.installed
	$(call run_release_tests,.venv-pandas3,PySpark $$($$v/bin/python -c 'import pyspark; print(pyspark.__version__)') \
	  with pandas $$($$v/bin/python -c 'import pandas; print(pandas.__version__)'),.kwire/run-pandas3,$(PANDAS3_TESTS))

bench: setup
	$(PY) benchmarks/read_throughput.py
	$(PY) benchmarks/write_throughput.py

# The read and write benchmarks on PySpark 4.0 (its virtualenv, kwire from the wheel) and on the newest release.
bench-releases: setup .venv-spark-4.0/.installed-4.0.5
	$(PY) benchmarks/releases.py --venv .venv-spark-4.0 --venv $(VENV)

clean:
	rm -rf $(VENV) .venv-spark-* .venv-pandas3 .venv-dist .venv-nospark build dist jars/*/target $(JARS_STAMP)
