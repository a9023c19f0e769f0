"""Built-in backends. Each module is an ordinary pluggy plugin (see ``repomapper.hookspecs``)."""
