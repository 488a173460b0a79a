"""Nsight Compute counters: one ncu run of a compiled kernel (:mod:`.ncu`, its child process :mod:`.run`)
and what the run says about each kernel (:mod:`.summary`, into a :class:`~tilelab.records.ProfileRecord`)."""
