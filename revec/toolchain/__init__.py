"""Building and caching compiled code: the C compiler through cffi with its build cache
(``cbuild``) and the checksums that guard every compiled cache entry before it is loaded
(``cache_check``).  Below the runtime (its compaction tables are C built here) and the
back ends."""
