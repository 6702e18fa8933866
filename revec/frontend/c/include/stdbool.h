/* revec's <stdbool.h> (bool is the prelude's typedef of _Bool) */
#ifndef __REVEC_STDBOOL_H
#define __REVEC_STDBOOL_H
#define true 1
#define false 0
#define __bool_true_false_are_defined 1
#endif
