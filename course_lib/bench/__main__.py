"""``python -m course_lib.bench``: the benchmark's command line."""

import sys

from .cli import main

sys.exit(main())
