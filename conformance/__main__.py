"""``python -m repomapper.conformance``: the ``repomapper conformance`` command."""

from .cli import conformance_command

if __name__ == "__main__":
    conformance_command(prog_name="repomapper conformance")
