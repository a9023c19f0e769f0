"""repomapper-graphql: a GraphQL backend for repomapper (the example of ``docs/plugins.md``)."""

__version__ = "0.1.0"
