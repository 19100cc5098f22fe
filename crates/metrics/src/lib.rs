//! Media-quality and TCP metrics over jitterlab's shared tables (see shared/design.md §Metric
//! definitions). Pure functions over column slices: no I/O, no Python.
