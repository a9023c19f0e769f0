"""A plugin module that calls ``sys.exit(3)`` while being imported."""

import sys

sys.exit(3)
