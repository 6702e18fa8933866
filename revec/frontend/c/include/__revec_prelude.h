/* revec's prelude, included before every Cilk C file (gcc -include): the names the
 * front end rewrites the Cilk keywords into (a spawn is the cast (__SPAWN_) of its call,
 * a sync the identifier cilk_sync), the <stdint.h> names (also without the header, as
 * revec always accepted), and the GNU spellings pycparser does not read. */
#ifndef __REVEC_PRELUDE_H
#define __REVEC_PRELUDE_H
typedef int __SPAWN_;
typedef int _S5;
extern int cilk_sync;
extern int _SY_;
#include <stdint.h>
#include <stddef.h>
typedef _Bool bool;
#define __extension__
#define __attribute__(...)
#define __asm__(...)
#define __restrict restrict
#define __restrict__ restrict
#define __inline inline
#define __inline__ inline
#define __const const
#define __volatile__ volatile
#define __signed__ signed
#define __builtin_expect(e, v) (e)
#endif
