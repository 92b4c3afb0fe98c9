//! Suites: many benchmarks described in one file, split into partitions
//! that run on many machines (a Slurm array, a Kubernetes Indexed Job, a CI
//! matrix) and meet again in one store under a shared run id.
//! See docs/SUITES.md and docs/SCALE-OUT.md.

pub mod cells;
pub mod file;
pub(crate) mod lock;
pub(crate) mod manifest;
pub mod merge;
pub mod partition;
pub(crate) mod scheduler;
pub mod status;
pub(crate) mod submit;

/// Labels cmdscope puts on the sessions of a suite run.
pub const RUN_LABEL: &str = "cmdscope.run";
pub const PARTITION_LABEL: &str = "cmdscope.partition";
pub const BENCHMARK_LABEL: &str = "cmdscope.benchmark";
