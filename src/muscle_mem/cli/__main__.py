"""``python -m muscle_mem.cli``."""

import sys

from muscle_mem.cli import main

sys.exit(main())
