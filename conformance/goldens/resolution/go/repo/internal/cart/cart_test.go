package cart

import "testing"

func TestTotal(t *testing.T) {}
