#include "cli_common.h"

// Shared helpers will live here as commands grow (formats, --set parsing).
