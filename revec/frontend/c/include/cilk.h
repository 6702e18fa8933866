/* revec's <cilk.h> (MIT Cilk-5, Cilk Plus): revec reads the Cilk keywords itself */
#include <cilk-lib.cilkh>
