/* revec's <memory.h> (as glibc's: <string.h>) */
#include <string.h>
