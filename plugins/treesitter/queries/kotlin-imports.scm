(import (qualified_identifier) @import.path)
