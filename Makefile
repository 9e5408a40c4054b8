# The two commands of the course (see README):
#   make lab    open JupyterLab on the first notebook
#   make test   unit tests, then strict nbval over every notebook and over each notebook's core path alone
# Both create .venv and install course_lib with its dependencies the first time.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.course-installed
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))
# The environment of every strict nbval run (CPU, PYTHONHASHSEED=0, one BLAS/OpenMP thread, MPLBACKEND unset), as an
# `env` prefix: defined once, in tools/nbval_env.py (standard library only, so the system Python reads it).
NBVAL_ENV := $(shell $(PYTHON) -m tools.nbval_env)
ifeq ($(NBVAL_ENV),)
$(error $(PYTHON) -m tools.nbval_env printed nothing: run make from the repository root with Python 3 as $$PYTHON)
endif
# -p tools.warm_kernel: each notebook's fresh kernel is forked from a process that has imported torch already, which
# saves each notebook 2-5 s of CPU (tools/warm_kernel.py says what stays as in a cold kernel; COURSE_WARM_KERNEL=0: cold).
NBVAL_FLAGS := --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:randomly -p tools.warm_kernel
# Two notebooks at a time (pytest-xdist); loadscope keeps each notebook's cells on one worker, in order.
NBVAL_PARALLEL := -n 2 --dist loadscope

.PHONY: lab test test-unit test-notebooks test-core-paths test-grading test-portable test-oldest test-gpu execute lint setup clean help

help:
	@echo "make lab        JupyterLab on notebooks/00_start_here.ipynb (sets up .venv on first use)"
	@echo "make test       unit tests + strict nbval over every notebook and every core path (CPU)"
	@echo "make test-portable  strict nbval under several CPU profiles (tools.portability): outputs that hold anywhere"
	@echo "make test-grading   nbgrader end to end: every notebook as an assignment, three submissions graded (slow)"
	@echo "make release    the student release without solutions: build/release and build/release.zip"
	@echo "make assignment NOTEBOOK=... COURSE_DIR=...   one nbgrader assignment (nbgrader runs without activating .venv)"
	@echo "make test-oldest    unit tests + the notebooks' checks with the oldest versions pyproject.toml allows"
	@echo "make test-gpu   unit tests + lax nbval with COURSE_DEVICE=cuda"
	@echo "make execute    re-execute every notebook in place, top to bottom, fresh kernel (CPU)"
	@echo "make lint       ruff check and ruff format --check over course_lib, tests and tools"
	@echo "make book       HTML book + reveal.js slides of the executed notebooks in build/html (offline)"
	@echo "make book-check the book, then its checks that need no browser (no Sphinx warning, no CDN link)"
	@echo "make e2e        the book, then JupyterLab and the book in headless Chromium (needs Debian's chromium)"
	@echo "make handouts   the book, then an A4 PDF per deck in build/handouts, the Chinese in zh/ (notes, glossary);"
	@echo "                LANGUAGE=en or LANGUAGE=zh prints one language's only"

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/00_start_here.ipynb

test: test-unit test-notebooks test-core-paths

# The unit tests on two workers (pytest-xdist), each test file on one worker (its module-scoped fixtures are built once,
# its tests run in order), with one BLAS/OpenMP thread per worker: threads that wait for a busy core spin, and on two
# cores that tripled the CPU of some tests (test_generation here: 27 s -> 8 s). They run no notebook: nbval's plugin,
# whose import costs about 2 s of CPU in each of the three pytest processes, stays out (see tests/conftest.py).
UNIT_ENV := env OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
UNIT_FLAGS := -n 2 --dist loadfile -p no:nbval

test-unit: $(STAMP)
	$(UNIT_ENV) $(BIN)/python -m pytest tests -q $(UNIT_FLAGS)

# tools.notebook_times runs the notebooks and prints each one's CPU and wall seconds and the course's CPU (the command
# and every process it started) against the budget: 30 s of CPU a notebook, 180 s the course, on CI's kind of machine
# (a table, not a failure: another CPU moves the numbers). On CI's kind of machine .ci/run passes
# NOTEBOOK_TIMES_FLAGS=--check, and a notebook or the course over budget fails the run there. Reports: build/nbval/.
NOTEBOOK_TIMES_FLAGS ?=
test-notebooks: $(STAMP)
	$(NBVAL_ENV) $(BIN)/python -m tools.notebook_times $(NOTEBOOK_TIMES_FLAGS) --run build/nbval -- \
		$(BIN)/python -m pytest --nbval $(NBVAL_FLAGS) $(NBVAL_PARALLEL) $(NOTEBOOKS) -q

# Each notebook's core path (its cells without the deep dives, python -m tools.sections) runs on its own in a fresh
# kernel and prints what the whole notebook printed: a lecturer who runs only the core sees the numbers of the text.
CORE_PATHS := build/core-paths
test-core-paths: $(STAMP)
	rm -rf $(CORE_PATHS)
	$(BIN)/python -m tools.sections --core-paths $(CORE_PATHS) $(NOTEBOOKS)
	$(NBVAL_ENV) $(BIN)/python -m pytest --nbval $(NBVAL_FLAGS) $(NBVAL_PARALLEL) $(CORE_PATHS) -q

# The stored outputs must be what any CPU computes: strict nbval again under profiles that make this machine compute
# like others (other vector kernels, BLAS code paths), round like two other machines in every operation (rounding1,
# rounding2: they also move every normal draw, which the jitter profile did alone, and every reduction's result, which
# another split between threads changes: threads2 and threads3 stay for runs by hand), and run while other processes
# load every core (busy: beside the notebooks that time something or measure memory, 02, 08, 10 and 12; with one
# thread the load changes no computed result, only the time it takes). Rounding2, scalar and busy run as one pass
# (rounding2+scalar+busy): they change independent things, the last bits of every result, the kernels and the
# machine's load, and each pass saved is 3-6 of CI's minutes (rounding1 still runs alone, on the native kernels).
# `make test` already ran the native profile.
PORTABLE_PROFILES ?= avx512,avx2,rounding1,rounding2+scalar+busy
PORTABLE_NOTEBOOKS ?= $(NOTEBOOKS)
test-portable: $(STAMP)
	$(BIN)/python -m tools.portability --profiles $(PORTABLE_PROFILES) $(PORTABLE_NOTEBOOKS)

# nbgrader end to end (tests/test_grading.py): each notebook becomes an nbgrader assignment, and a reference, an
# unchanged and a library-shortcut submission are autograded and scored per exercise. Each notebook runs three times,
# so `make test` skips it; CI runs it, with the tests that nbgrader runs without an activated environment and that
# an assignment's hidden tests draw from its secret, and of a week's share of a notebook (tests/test_release.py).
# Installs the `grading` extra (nbgrader) the first time.
GRADING_STAMP := $(VENV)/.grading-installed
$(GRADING_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,grading]"
	@touch $(GRADING_STAMP)

test-grading: $(GRADING_STAMP)
	COURSE_GRADING=1 $(NBVAL_ENV) $(BIN)/python -m pytest tests/test_grading.py \
		tests/test_release.py::test_an_assignment_is_made_where_the_environment_is_not_activated \
		tests/test_release.py::test_an_assignments_hidden_tests_draw_their_inputs_from_its_secret \
		tests/test_release.py::test_an_assignment_of_a_weeks_share_grades_only_its_exercises -n 2 -q -rs

# What students receive, and nbgrader as the lecturer's guide runs it (tools/release.py; tests/test_release.py):
#   make release     the student release, no solutions, in build/release and build/release.zip; RELEASE_REPOSITORY
#                    (owner/name) and RELEASE_BRANCH are where it is published, for its Colab cells and links;
#                    RELEASE_GIT_BRANCH=student also commits it to that branch here (the checkout is not touched)
#   make assignment NOTEBOOK=notebooks/04_scaling_and_softmax_gradient.ipynb COURSE_DIR=../course
#                    one nbgrader assignment, a04: the course folder's nbgrader_config.py, the source version, the release;
#                    its hidden tests draw their inputs from a new random secret (SECRET=... to make the same again);
#                    EXERCISES=1,3 NAME=a12-week12 grades a week's share of a notebook (the others: ungraded)
#   make nbgrader COURSE_DIR=../course ARGS="autograde a04"   any other nbgrader command in the course folder
# nbgrader starts `alembic` by name when it creates its gradebook; these run it with the environment's bin first on
# PATH, so nothing needs activating.
RELEASE_BRANCH ?= student
COURSE_DIR ?= build/nbgrader-course
.PHONY: release assignment nbgrader
release: $(STAMP)
	$(BIN)/python -m tools.release student --out build/release --archive build/release.zip \
		$(if $(RELEASE_REPOSITORY),--repository "$(RELEASE_REPOSITORY)") --colab-branch "$(RELEASE_BRANCH)" $(if $(RELEASE_GIT_BRANCH),--branch "$(RELEASE_GIT_BRANCH)")

assignment: $(GRADING_STAMP)
	@test -n "$(NOTEBOOK)" || { echo "make assignment NOTEBOOK=notebooks/NN_name.ipynb [COURSE_DIR=...]"; exit 2; }
	$(BIN)/python -m tools.release assignment "$(NOTEBOOK)" --course "$(COURSE_DIR)" \
		$(if $(RELEASE_REPOSITORY),--repository "$(RELEASE_REPOSITORY)" --colab-branch "$(RELEASE_BRANCH)") \
		$(if $(SECRET),--secret "$(SECRET)") $(if $(EXERCISES),--exercises "$(EXERCISES)") $(if $(NAME),--name "$(NAME)")

nbgrader: $(GRADING_STAMP)
	$(BIN)/python -m tools.release nbgrader --course "$(COURSE_DIR)" -- $(ARGS)

# Every lower bound in pyproject.toml is tested: the oldest Python the course supports (3.10) with the oldest version
# of every dependency (python -m tools.oldest_requirements pins each `>=` floor), then the unit tests and the notebooks'
# asserts (lax nbval: stored digits come from newer versions). Downloads about 3 GB the first time.
PYTHON_OLDEST ?= python3.10
OLDEST := .venv-oldest
test-oldest:
	@test -x $(OLDEST)/bin/python || $(PYTHON_OLDEST) -m venv $(OLDEST)
	$(OLDEST)/bin/python -m pip install --quiet --upgrade pip
	$(OLDEST)/bin/python -m tools.oldest_requirements --extras dev > $(OLDEST)/oldest-requirements.txt
	$(OLDEST)/bin/python -m pip install --quiet -r $(OLDEST)/oldest-requirements.txt
	$(OLDEST)/bin/python -m pip install --quiet --no-deps -e .
	$(OLDEST)/bin/python -m pip list --format=freeze > $(OLDEST)/installed.txt
	$(UNIT_ENV) $(OLDEST)/bin/python -m pytest tests -q -p no:cacheprovider $(UNIT_FLAGS)
	$(NBVAL_ENV) $(OLDEST)/bin/python -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider $(NBVAL_PARALLEL) $(NOTEBOOKS) -q

test-gpu: $(STAMP)
	COURSE_DEVICE=cuda $(BIN)/python -m pytest tests -q
	env -u MPLBACKEND COURSE_DEVICE=cuda $(BIN)/python -m pytest --nbval-lax --nbval-current-env $(NOTEBOOKS) -q

execute: $(STAMP)
	@for nb in $(NOTEBOOKS); do \
		echo "executing $$nb"; \
		$(NBVAL_ENV) $(BIN)/jupyter nbconvert --to notebook --execute --inplace \
			--ExecutePreprocessor.timeout=600 "$$nb" || exit 1; \
	done

lint: $(STAMP)
	$(BIN)/ruff check course_lib tests tools
	$(BIN)/ruff format --check course_lib tests tools

clean:
	rm -rf build .pytest_cache .hypothesis

# Student versions (course_lib/student.py): every exercise's solution replaced by a stub, outputs cleared.
.PHONY: student
# `make student VARIANT_SEED=s1234567`: that student's own numbers in the by-hand exercises. The Chinese twins
# (notebooks/zh/) go to student/zh/, with the same stubs and checks as the English.
student: $(STAMP)
	$(BIN)/python -m course_lib.classroom.student notebooks --out student $(if $(VARIANT_SEED),--variant-seed "$(VARIANT_SEED)")
	$(BIN)/python -m course_lib.classroom.student notebooks/zh --out student/zh $(if $(VARIANT_SEED),--variant-seed "$(VARIANT_SEED)")

# The book and the real-browser test (python -m tools.build_book, tests/e2e/). Their tools are the extras "book"
# (Sphinx, MyST-NB, Sphinx Book Theme, and MathJax and reveal.js from PyPI) and "e2e" (Playwright, which drives Debian's
# Chromium: `apt-get install chromium`, or tools/ensure_chromium.sh; it never downloads a browser).
BOOK_STAMP := $(VENV)/.course-book-installed
E2E_STAMP  := $(VENV)/.course-e2e-installed
.PHONY: book book-check e2e handouts

$(BOOK_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[dev,book]"
	@touch $@

$(E2E_STAMP): $(BOOK_STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[dev,book,e2e]"
	@touch $@

book: $(BOOK_STAMP)
	$(BIN)/python -m tools.build_book

# The built book as a file: rebuilt only where a tracked file it is made from (or the course's code) is newer.
BOOK_INPUTS := $(shell git ls-files notebooks docs book locale data/fonts tools course_lib README.md 2>/dev/null)
build/html/index.html: $(BOOK_STAMP) $(BOOK_INPUTS)
	$(BIN)/python -m tools.build_book

# The book's own checks that need no browser (no Sphinx warning, no CDN link): run where Chromium is missing too.
book-check: book
	COURSE_E2E=1 $(BIN)/python -m pytest tests/e2e/test_book_files.py -q

# Four workers, each with its own Chromium and book server: the tests share nothing but the built book, and every deck
# (English and Chinese) is a test of its own, so the slowest decks spread over the workers. A browser test waits a
# good part of its time (MathJax's queue, Reveal's transitions, screenshots), so four workers on two cores beat two:
# 78 tests in 404 s with two, 326 s with four (2-core AMD EPYC, 2026-12-03).
e2e: $(E2E_STAMP) book
	COURSE_E2E=1 $(BIN)/python -m pytest tests/e2e -q -n 4

# One A4 PDF per deck, English and Chinese (tools/handouts.py): each slide at the page's width with its notes below
# it, up to three a page, and a glossary of the terms the notes link to; through the Chromium of `make e2e`, offline.
# The book is built first only where it is missing or older than its sources (not while the decks are printed from
# it).
handouts: $(E2E_STAMP) build/html/index.html
	$(BIN)/python -m tools.handouts $(if $(LANGUAGE),--language $(LANGUAGE))
