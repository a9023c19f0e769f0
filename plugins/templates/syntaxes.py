"""The tag syntaxes a template file is read with (their own module: naming them must not load
the scanner, whose patterns are compiled on import and read only when a template is scanned)."""

GO = "go"  # {{ }} with Go actions (define, block, template, partial, end), Handlebars too
JINJA = "jinja"  # {% %}, {# #} and {{ }} expressions
ERB = "erb"  # <% %>
FTL = "freemarker"  # <#directive>, <@macro>, <#-- -->
