; JSX elements: <Button /> and <Layout>...</Layout> refer to components.

((jsx_opening_element name: (identifier) @reference.call)
  (#match? @reference.call "^[A-Z]"))
((jsx_self_closing_element name: (identifier) @reference.call)
  (#match? @reference.call "^[A-Z]"))
(jsx_expression (identifier) @reference.name)
