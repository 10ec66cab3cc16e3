"""``python -m lm_eval_memrisk.cli ...``: the ``memrisk`` command without the console script."""

import sys

from lm_eval_memrisk.cli import main

sys.exit(main())
