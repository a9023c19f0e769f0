/* a compatibility shim, not <string.h> */
