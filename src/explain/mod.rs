//! `cmdscope explain`: one traced run (ptrace) that shows the process tree,
//! how each process was created (fork-style, vfork-style, thread), execs,
//! intermediate shells, syscalls and I/O, and turns them into hints.
//!
//! One file per job: `tracer` (the ptrace loop), `syscalls` (names), `mem`
//! and `procfs` (what the tracer reads from tracees), `tree` (the process
//! model), `hints`, `monitor` (--monitor/--match). See docs/EXPLAIN.md.

pub mod hints;
pub mod mem;
pub mod monitor;
pub mod procfs;
pub mod syscalls;
pub mod tracer;
pub mod tree;
