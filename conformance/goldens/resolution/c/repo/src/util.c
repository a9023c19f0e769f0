#include "util.h"
int clamp(int x) { return x < 0 ? 0 : x; }
