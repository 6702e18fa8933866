"""Printers of the checked IR shared by every back end (and by the Cilk C front end's
sequential reference): expressions and statements as Python (``pyexpr``) and as C
(``cexpr``).  Nothing here decides a schedule or a layout: that is the kernel plan's
(``revec/transforms/kernel_plan.py``); a printer only spells it."""
