#include <stdio.h>
#include <string.h>
#include "util.h"
#include "config.h"

int main(void) { return clamp(ACME_VERSION); }
