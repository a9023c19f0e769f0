"""A plugin whose tag hook is misspelled (``extract_tag``): pluggy would never call it."""

from repomapper.hookspecs import hookimpl
from repomapper.model import BackendInfo


@hookimpl
def backend_info():
    return BackendInfo("misspelled", "1.0", ("foo",), (".foo",), ("definitions",))


@hookimpl
def extract_tag(source):
    return []
