"""``python -m repomapper``: the installed ``repomapper`` command, for environments that have the
package but not its script on ``PATH``."""

from .cli import run

run()
