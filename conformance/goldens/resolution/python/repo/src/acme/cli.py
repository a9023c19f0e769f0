# ruff: noqa  (a fixture: its imports are what is checked)
import json
import acme.core
from . import util
from .core import run

run()
