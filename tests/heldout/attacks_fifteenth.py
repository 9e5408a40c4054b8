"""Held-out attacks: the fifteenth and sixteenth lecturers' trials (2026-12-04), on notebook 04, each appended to
exercise 1's reference answer; tests/test_grading.py grades them with nbgrader. In the trials each ran code that no
reading of a cell sees, which then made the checkers say nothing (or, in the trials, forged each test cell's evidence
from the key found in memory): junk answers scored full marks, unflagged. Each change lasts.

- a02_backend_module (fifteenth): the cell writes a module file and has matplotlib load it by name
  (``plt.switch_backend("module://...")``); refused as it loads (a module from a file outside the libraries), and
  every later test cell says so;
- b02_npy_pickle (sixteenth): ``from numpy import load`` under another name, and a ``.npy`` file whose object array
  runs a string of code when loaded (the bytes written by the cell: no code in the cell names what runs);
- b03_singledispatch (sixteenth): an annotation that is a name bound to a string computed at run time, evaluated by
  ``functools.singledispatch``'s ``register`` (through ``typing.get_type_hints``);
- c01_read_array (seventeenth): the same kind of ``.npy`` file read by ``numpy.lib.format.read_array`` (in the trial,
  the code it ran read raw memory with ``as_strided`` and signed every test cell with the grader's hash states).
"""

import io

_SILENCE = "__import__('course_lib').__setattr__('check_answer', lambda *args, **kwargs: None)"


class _Runs:
    """An object that, unpickled, runs ``_SILENCE`` (built here, where the attack's author would, once)."""

    def __reduce__(self) -> tuple:
        return (eval, (_SILENCE,))


def _npy() -> str:
    """The bytes of a ``.npy`` file holding an object array of one :class:`_Runs`, as hex."""
    import numpy as np

    array = np.empty(1, dtype=object)
    array[0] = _Runs()
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    assert b"eval" in buffer.getvalue()  # (the pickle names the builtin it calls, not this module's class)
    return buffer.getvalue().hex()


FIFTEENTH_04 = {
    "a02_backend_module: a module the cell wrote, loaded as matplotlib's backend": (
        "with open('figure_style.py', 'w') as file:\n"
        f"    file.write({_SILENCE!r})\n"
        "try:\n"
        "    plt.switch_backend('module://figure_style')\n"
        "except Exception:\n"
        "    pass\n"
    ),
    "b02_npy_pickle: a loader of pickles under another name": (
        "from numpy import load as read_cache\n\n"
        "with open('/tmp/course_cache.npy', 'wb') as file:\n"
        f"    file.write(bytes.fromhex({_npy()!r}))\n"
        "read_cache('/tmp/course_cache.npy', allow_pickle=True)\n"
    ),
    "c01_read_array: a pickle in a data file, read by NumPy's read_array": (
        "from numpy.lib.format import read_array\n\n"
        "with open('/tmp/course_cache_c01.npy', 'wb') as file:\n"
        f"    file.write(bytes.fromhex({_npy()!r}))\n"
        "with open('/tmp/course_cache_c01.npy', 'rb') as file:\n"
        "    read_array(file, allow_pickle=True)\n"
    ),
    "b03_singledispatch: an annotation computed at run time, evaluated by register": (
        "import functools\n\n\n"
        "@functools.singledispatch\n"
        "def describe(x):\n"
        "    return str(x)\n\n\n"
        f"precision = bytes.fromhex({(_SILENCE + ' or float').encode().hex()!r}).decode()\n\n\n"
        "def describe_float(x: precision):\n"
        "    return str(x)\n\n\n"
        "try:\n"
        "    describe.register(describe_float)\n"
        "except Exception:\n"
        "    pass\n"
    ),
}
