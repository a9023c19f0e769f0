"""Containment of plugin code: limits, output validation, supervised worker processes.

Plugins (third-party backends, compiled grammars) run on untrusted repositories, so their faults
are expected input. This subpackage makes each fault cost at most the file it touches:

- :mod:`.limits`: the settings (time limit per hook call, tag cap, failures before disabling);
- :mod:`.validate`: what a backend returns is checked at the boundary;
- :mod:`.supervisor`: hooks run in worker processes that may crash or hang without the run;
- :mod:`.lifeline`: workers exit when the process that started them dies.
"""

from .limits import Limits
from .validate import validate_imports, validate_tags

__all__ = ["Limits", "validate_imports", "validate_tags"]
