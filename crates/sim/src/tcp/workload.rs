//! Workloads (filled in below).
