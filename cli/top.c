#include "cli.h"
int cli_top(int argc, char **argv) { return 2; }
