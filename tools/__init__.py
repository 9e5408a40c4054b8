"""The course's maintenance tools, run from the repository root as modules: ``python -m tools.NAME`` (``--help`` says
what each does). They import each other as ``tools.NAME`` and ``course_lib`` as installed; they are no part of the
package students install.

Two files here are not modules to import: ``jitter_startup.py`` and ``rounding_startup.py`` are IPython start-up files
that ``tools.portability`` copies into a fresh IPython profile, where the notebooks' kernels run them by themselves.
"""
