#include "config.h"
#include "chakra/et_io.h"
int main(void) { return 0; }
