(namespace_use_declaration) @import.php_use
(require_expression) @import.php_require
(require_once_expression) @import.php_require
(include_expression) @import.php_require
(include_once_expression) @import.php_require
