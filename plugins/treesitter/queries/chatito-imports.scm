(import (file) @import.path)
