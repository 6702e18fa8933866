/* revec's <cilk/cilk.h>: revec reads cilk_spawn, cilk_sync, cilk_for and cilk_scope
 * (and the _Cilk_ keywords) itself; nothing to declare */
