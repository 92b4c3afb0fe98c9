//! Sampled CPU profiles of every cell and their differences, for
//! `cmdscope explain --profile` (the command itself is `commands::explain`,
//! the words and files `report::profile`). See docs/EXPLAIN.md.
//!
//! - `sampler`: one run sampled with `perf_event_open` over its process
//!   tree (ring buffer, mappings).
//! - `symbols`: addresses to frames (ELF symbols, debug files found by
//!   `debuginfo` and `debuginfod`, inlined frames from `dwarf`, names by
//!   `demangle`, unwind-table ranges; kallsyms, perf maps), each mapped
//!   file told apart by `identity`.
//! - `jit`: what `--jit-symbols` asks of the runtimes, and the jitdump
//!   files they write (names and unwind tables).
//! - `runs`: one phase's runs in interleaved shuffled blocks
//!   (`run::schedule`), with unsampled runs beside them when asked.
//! - `rate`: the kernel's limit on the rate, a short command's second
//!   phase at a raised rate, and whether sampling slowed the runs.
//! - `simulated`: `--simulate`'s runs under callgrind, counted instead
//!   of sampled (call chains weighted in instructions, read from
//!   callgrind's out-files).
//! - here: stacks per run, self and total time per function, and per pair
//!   the change of every reported function's self time, paired by block
//!   and decided by the one comparison engine with Bonferroni over the
//!   functions reported.

pub(crate) mod debuginfo;
pub(crate) mod debuginfod;
pub(crate) mod demangle;
pub(crate) mod dwarf;
pub mod identity;
pub mod jit;
pub mod rate;
mod runs;
pub mod sampler;
pub mod simulated;
pub mod symbols;
pub(crate) mod unwind;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::analysis::comparison::{self, Comparison, Design};
use crate::analysis::sequential::{Sequential, UNTIL_DECIDED_LOOKS};
use crate::error::{Error, ExecError, ProfileError, Result};
use crate::exec::HeldCommand;
use crate::run::plan::{Cell, REFERENCE};

pub use symbols::{Frame, ModuleInfo};

/// Set on a frame id in a stack where that function was inlined into the
/// frame before it (its caller): one address gives several frames.
/// `Profile::frame` reads through it; functions are counted without it,
/// so a function's rows and differences are the same inlined or not.
pub const INLINED: u32 = 1 << 31;

/// The function of a stack's frame id, without the `INLINED` mark.
pub fn function_id(id: u32) -> u32 {
    id & !INLINED
}

/// Whether a stack's frame was inlined into its caller.
pub fn is_inlined(id: u32) -> bool {
    id & INLINED != 0
}

/// Default sampling frequency: 999 Hz rather than 1000, so sampling does
/// not run in lockstep with programs' millisecond timers.
pub const DEFAULT_FREQUENCY: u64 = 999;
/// Default runs per cell: enough pairs for the engine's paired tests at a
/// Bonferroni level over a few dozen functions.
pub const DEFAULT_RUNS: usize = 10;
/// Functions compared per pair: the largest by self time in either cell.
pub const MAX_FUNCTIONS: usize = 30;
/// A function is compared when its self time is at least this share of
/// the larger cell's sampled time in either cell.
pub const MIN_SHARE: f64 = 0.005;
/// The marker frames ending off-CPU stacks.
pub const OFF_CPU_BLOCKED: &str = "[off-CPU: blocked]";
pub const OFF_CPU_RUNNABLE: &str = "[off-CPU: waiting for a CPU]";

/// Below this wall time per run, a command without a single sample is
/// "too short" (an error); above it, "blocked" (an empty profile). Far
/// above a command that exits at once even on a loaded machine.
pub const BLOCKED_WALL: f64 = 0.1;
/// Family-wise significance level of one pair's function differences.
pub const ALPHA: f64 = 0.05;

pub struct Options {
    pub runs: usize,
    pub frequency: u64,
    pub timeout: Option<Duration>,
    /// Sample with cpu-clock even where cycles exist (tests).
    pub force_software: bool,
    /// Unwind copied user stacks with DWARF (else frame pointers only).
    pub dwarf: bool,
    pub seed: u64,
    /// When the default budget leaves a measured CPU difference
    /// unexplained, sample again at a raised rate until it is explained
    /// or the time budget ends (`rate`). Off when the user chose the runs
    /// or the rate.
    pub raise_rate: bool,
    /// Ask the runtimes cmdscope recognises to name their code (`jit`).
    pub jit_symbols: bool,
    /// Count under this simulator instead of sampling (`simulated`).
    pub simulate: Option<crate::exec::simulate::Simulation>,
    /// Under the simulator, when counts that vary between runs repeated in
    /// every run of each cell, make the runs that let such a repetition
    /// decide (`simulated_profile`). Off when the user chose the runs.
    pub raise_runs: bool,
}

/// One run's stacks: frame ids from the root to the leaf, with seconds.
#[derive(Clone, Debug, Default)]
pub struct RunStacks {
    pub stacks: HashMap<Vec<u32>, f64>,
    /// Time off the CPU by stack, the stack ending in a marker frame that
    /// says whether the thread blocked or waited for a CPU.
    pub off_cpu: HashMap<Vec<u32>, f64>,
    /// Seconds off the CPU: blocked, and preempted waiting for a CPU.
    pub blocked: f64,
    pub runnable: f64,
    pub samples: u64,
    pub wall: f64,
    pub cpu: f64,
    pub lost: u64,
    /// Times the kernel throttled sampling during the run.
    pub throttled: u64,
    /// A simulated run's counts (its stacks are then instructions).
    pub counts: Option<simulated::RunCounts>,
}

impl RunStacks {
    fn self_time(&self) -> HashMap<u32, f64> {
        let mut m = HashMap::new();
        for (s, &w) in &self.stacks {
            if let Some(&leaf) = s.last() {
                *m.entry(function_id(leaf)).or_insert(0.0) += w;
            }
        }
        m
    }

    fn total_time(&self) -> HashMap<u32, f64> {
        let mut m = HashMap::new();
        for (s, &w) in &self.stacks {
            let mut seen: Vec<u32> = s.iter().map(|&f| function_id(f)).collect();
            seen.sort_unstable();
            seen.dedup();
            for f in seen {
                *m.entry(f).or_insert(0.0) += w;
            }
        }
        m
    }

    pub fn sampled(&self) -> f64 {
        // From +0.0: an empty sum of floats is -0.0.
        self.stacks.values().fold(0.0, |a, b| a + b)
    }
}

/// A function's time in one cell, in seconds per run.
#[derive(Clone, Debug)]
pub struct FunctionTime {
    pub frame: u32,
    pub self_time: f64,
    pub total: f64,
}

#[derive(Clone, Debug)]
pub struct CellProfile {
    pub name: String,
    /// Runs in block order: run k of every cell was in block k.
    pub runs: Vec<RunStacks>,
    /// By self time, largest first.
    pub functions: Vec<FunctionTime>,
    /// The hottest stacks (root to leaf) with seconds per run.
    pub hot_stacks: Vec<(Vec<u32>, f64)>,
    /// The longest off-CPU stacks with seconds per run.
    pub off_cpu_stacks: Vec<(Vec<u32>, f64)>,
    /// Seconds per run off the CPU: blocked, and waiting for a CPU.
    pub blocked: f64,
    pub runnable: f64,
}

impl CellProfile {
    pub fn samples(&self) -> u64 {
        self.runs.iter().map(|r| r.samples).sum()
    }
    pub fn lost(&self) -> u64 {
        self.runs.iter().map(|r| r.lost).sum()
    }
    pub fn throttled(&self) -> u64 {
        self.runs.iter().map(|r| r.throttled).sum()
    }
    /// Seconds per run of every stack (for folded files and flame graphs).
    pub fn stacks_per_run(&self) -> HashMap<Vec<u32>, f64> {
        let mut m: HashMap<Vec<u32>, f64> = HashMap::new();
        let n = self.runs.len().max(1) as f64;
        for r in &self.runs {
            for (s, &w) in &r.stacks {
                *m.entry(s.clone()).or_insert(0.0) += w;
            }
        }
        for w in m.values_mut() {
            *w /= n;
        }
        m
    }
    pub fn sampled_per_run(&self) -> f64 {
        let n = self.runs.len().max(1) as f64;
        self.runs.iter().map(RunStacks::sampled).sum::<f64>() / n
    }

    /// A simulated cell's estimated cycles of a function per run.
    pub fn cycles_per_run(&self, frame: u32) -> f64 {
        let n = self.runs.len().max(1) as f64;
        self.runs
            .iter()
            .filter_map(|r| r.counts.as_ref()?.cycles.get(&frame))
            .sum::<f64>()
            / n
    }

    /// Whether a simulated cell's instructions are the same in every run
    /// (a deterministic program).
    pub fn counts_repeat(&self) -> bool {
        let instructions: Vec<f64> = self.counted().iter().map(|c| c.0).collect();
        comparison::constant(&instructions).is_some()
    }

    /// A simulated cell's totals per run: instructions and estimated cycles.
    pub fn counted(&self) -> Vec<(f64, f64)> {
        self.runs
            .iter()
            .filter_map(|r| r.counts.as_ref())
            .map(|c| (c.total.ir as f64, c.total.estimated_cycles() as f64))
            .collect()
    }

    /// Mean wall time and CPU time measured per run (0 without runs).
    pub fn measured_per_run(&self) -> (f64, f64) {
        let n = self.runs.len().max(1) as f64;
        let wall = self.runs.iter().map(|r| r.wall).sum::<f64>() / n;
        let cpu = self.runs.iter().map(|r| r.cpu).sum::<f64>() / n;
        (wall, cpu)
    }
}

/// One function's change from the baseline to the candidate.
#[derive(Clone, Debug)]
pub struct FunctionDiff {
    pub frame: u32,
    /// The engine's comparison of the per-block self times (its `shift`
    /// and `shift_ci` are the delta and its interval, in seconds per run).
    pub comparison: Comparison,
}

impl FunctionDiff {
    pub fn real(&self) -> bool {
        self.comparison.verdict.is_significant()
    }
}

#[derive(Clone, Debug)]
pub struct PairDiff {
    pub baseline: usize,
    pub candidate: usize,
    /// The measured wall and CPU time differences (engine, paired).
    pub wall: Comparison,
    pub cpu: Comparison,
    /// Sorted by |delta|, largest first.
    pub functions: Vec<FunctionDiff>,
    /// Root to the deepest frame whose inclusive change holds at least
    /// half of the measured CPU difference; empty when none does or when
    /// the engine does not call the CPU difference real.
    pub hot_path: Vec<u32>,
    /// Simulated: the totals' instructions and estimated cycles.
    pub counted: Option<[Comparison; 2]>,
}

impl PairDiff {
    /// Sum of the changes of the functions called real.
    pub fn explained(&self) -> f64 {
        self.functions
            .iter()
            .filter(|f| f.real())
            .map(|f| f.comparison.shift)
            .fold(0.0, |a, b| a + b)
    }
}

pub struct Profile {
    pub event: sampler::Event,
    pub dwarf: bool,
    pub fallback: Option<String>,
    pub frequency: u64,
    pub kernel_frames: bool,
    /// Indexed by `frame`: stacks' ids may carry the `INLINED` mark.
    pub frames: Vec<Frame>,
    pub cells: Vec<CellProfile>,
    pub pairs: Vec<PairDiff>,
    /// What was found for every module sampled, and where.
    pub modules: Vec<ModuleInfo>,
    pub interrupted: bool,
    /// Context switches were sampled: off-CPU time is known.
    pub off_cpu: bool,
    /// A short command's second phase at a raised rate, which the cells
    /// and pairs above come from.
    pub raised: Option<rate::Raised>,
    /// The cells whose sampled runs were slower than unsampled ones.
    pub distorted: Vec<rate::Distortion>,
    /// Counted under this simulator, not sampled: the unit is instructions.
    pub simulation: Option<crate::exec::simulate::Simulation>,
    /// Counted: the runs per cell first made, when more were made because
    /// counts that vary repeated (`simulated_profile`).
    pub runs_raised_from: Option<usize>,
}

impl Profile {
    /// The frame of an id, marked `INLINED` or not.
    pub fn frame(&self, id: u32) -> &Frame {
        &self.frames[function_id(id) as usize]
    }
}

/// Frame interning: every (function, module) gets one id (the source
/// file is the first one seen). Looked up by module, then function,
/// without copying either: every frame of every sample comes here.
#[derive(Default)]
struct Interner {
    ids: HashMap<String, HashMap<String, u32>>,
    frames: Vec<Frame>,
}

impl Interner {
    fn id(&mut self, f: &Frame) -> u32 {
        if let Some(&i) = self.ids.get(&f.module).and_then(|m| m.get(&f.function)) {
            return i;
        }
        let i = self.frames.len() as u32;
        self.frames.push(f.clone());
        self.ids
            .entry(f.module.clone())
            .or_default()
            .insert(f.function.clone(), i);
        i
    }
}

fn launch(cell: &Cell, opts: &Options) -> Result<sampler::Launch> {
    let program = cell.argv.first().ok_or(ExecError::EmptyCommand)?;
    let v = &cell.variant;
    // A fresh working directory per run is not made here yet; the other
    // conditions are applied in the held child, as explain applies them.
    if v.workdir.is_some() {
        return Err(ProfileError::Workdir.into());
    }
    let credentials = v
        .user
        .as_deref()
        .map(crate::exec::resolve_user)
        .transpose()?;
    let mut envp = crate::exec::environment(&cell.argv, &cell.env, v.clear_env, v.env_size)?;
    if opts.jit_symbols {
        envp = jit::with_runtime_options(envp);
    }
    Ok(sampler::Launch {
        command: HeldCommand {
            program: crate::exec::resolve_program(program)?,
            argv: cell.argv.clone(),
            envp,
            cwd: None,
            cpus: v.cpus.clone(),
            nice: v.nice,
            credentials,
            show_output: false,
            keep_stdin: false,
        },
        timeout: opts.timeout,
    })
}

/// The reference cell, as `run` pairs them: `--reference`'s cell, else the first.
pub fn reference(cells: &[Cell]) -> usize {
    cells
        .iter()
        .position(|c| c.template == REFERENCE)
        .unwrap_or(0)
}

/// Profiles every cell `opts.runs` times in interleaved shuffled blocks and
/// compares each cell with the reference; with `opts.raise_rate`, a pair
/// whose CPU difference the functions do not account for is profiled
/// again at a raised rate (`rate`).
pub fn profile_cells(cells: &[Cell], opts: &Options) -> Result<Profile> {
    if let Some(sim) = &opts.simulate {
        return simulated_profile(cells, opts, sim);
    }
    let limit = rate::kernel_limit();
    rate::check_frequency(opts.frequency, limit)?;
    let launches = cells
        .iter()
        .map(|c| launch(c, opts))
        .collect::<Result<Vec<_>>>()?;
    let setup = sampler::Setup::probe(opts.frequency, opts.force_software, opts.dwarf)?;
    let mut sampling = runs::Sampling::default();
    let first = sampling.phase(
        cells,
        &launches,
        &runs::PhasePlan {
            setup: &setup,
            blocks: opts.runs,
            seed: opts.seed,
            plain: if opts.frequency > DEFAULT_FREQUENCY {
                rate::PLAIN_RUNS
            } else {
                0
            },
            deadline: None,
            jit_files: opts.jit_symbols,
        },
        &mut |_, _| false,
    )?;
    for (cell, r) in cells.iter().zip(&first.runs) {
        too_short(cell, r, &setup)?;
    }
    let r = reference(cells);
    let mut shown = first;
    let mut frequency = setup.frequency;
    let mut level = ALPHA;
    let mut raised = None;
    let unexplained = !shown.interrupted
        && opts.raise_rate
        && pairs_at(&summaries(cells, &shown.runs), r, ALPHA)
            .iter()
            .any(|d| !rate::explained(d));
    if unexplained {
        let faster = sampler::Setup {
            frequency: rate::raised(setup.frequency, limit),
            ..setup.clone()
        };
        let mut seq = Sequential::until_decided(ALPHA, comparison::DEFAULT_PRECISION);
        let cap = *UNTIL_DECIDED_LOOKS.last().unwrap_or(&1000);
        let second = sampling.phase(
            cells,
            &launches,
            &runs::PhasePlan {
                setup: &faster,
                blocks: cap,
                seed: opts.seed.wrapping_add(1),
                plain: rate::PLAIN_RUNS,
                deadline: Some(Instant::now() + rate::BUDGET),
                jit_files: opts.jit_symbols,
            },
            &mut |runs, blocks| {
                if !seq.is_look(blocks) {
                    return false;
                }
                let cells = summaries(cells, runs);
                seq.look_with(blocks, MAX_FUNCTIONS, |level| {
                    pairs_at(&cells, r, level).iter().all(rate::explained)
                })
            },
        )?;
        level = seq.final_level();
        let blocks = second.runs.iter().map(Vec::len).min().unwrap_or(0);
        // A second phase interrupted before its first block shows the first.
        if blocks > 0 {
            raised = Some(rate::Raised {
                first_runs: opts.runs,
                first_frequency: setup.frequency,
                frequency: faster.frequency,
                blocks,
                seconds: second.seconds,
                ended: if second.settled {
                    rate::Ended::Explained
                } else if second.interrupted {
                    rate::Ended::Interrupted
                } else if second.out_of_time {
                    rate::Ended::Budget
                } else {
                    rate::Ended::Runs
                },
                level,
            });
            frequency = faster.frequency;
            shown = second;
        } else {
            level = ALPHA;
            shown.interrupted |= second.interrupted;
        }
    }
    let interrupted = shown.interrupted;
    // Whole blocks only, so run k of every cell shares block k.
    let blocks = shown.runs.iter().map(Vec::len).min().unwrap_or(0);
    if interrupted && blocks == 0 {
        return Err(Error::Interrupted);
    }
    let walls: Vec<Vec<f64>> = shown
        .runs
        .iter()
        .map(|r| r.iter().map(|x| x.wall).collect())
        .collect();
    let distorted = rate::distortions(&walls, &shown.plain);
    let cell_profiles = summaries(cells, &shown.runs);
    let pairs = pairs_at(&cell_profiles, r, level);
    Ok(Profile {
        event: setup.event,
        dwarf: setup.dwarf,
        fallback: setup.fallback.clone(),
        frequency,
        kernel_frames: !setup.exclude_kernel,
        frames: sampling.interner.frames,
        cells: cell_profiles,
        pairs,
        modules: sampling.sym.modules(),
        interrupted,
        off_cpu: !sampling.off_cpu_missing,
        raised,
        distorted,
        simulation: None,
        runs_raised_from: None,
    })
}

/// `profile_cells` under the simulator: the counted runs, compared at
/// the family-wise level. With `opts.raise_runs`, when counts that vary
/// between runs repeated in every run of each cell and differ, too few
/// runs for such a repetition to decide (`Caveat::RepeatedCounts`), more
/// blocks are made until it can.
fn simulated_profile(
    cells: &[Cell],
    opts: &Options,
    sim: &crate::exec::simulate::Simulation,
) -> Result<Profile> {
    let mut wanted = |runs: &[Vec<RunStacks>]| {
        let pairs = pairs_at(&summaries(cells, runs), reference(cells), ALPHA);
        runs_for_repeats(&pairs).filter(|_| opts.raise_runs)
    };
    let (runs, frames, interrupted) = simulated::profile_cells(cells, opts, sim, &mut wanted)?;
    let blocks = runs.iter().map(Vec::len).min().unwrap_or(0);
    if interrupted && blocks == 0 {
        return Err(Error::Interrupted);
    }
    let cell_profiles = summaries(cells, &runs);
    let pairs = pairs_at(&cell_profiles, reference(cells), ALPHA);
    Ok(Profile {
        event: sampler::Event::CpuClock,
        dwarf: false,
        fallback: None,
        frequency: 0,
        kernel_frames: false,
        frames,
        cells: cell_profiles,
        pairs,
        modules: Vec::new(),
        interrupted,
        off_cpu: false,
        raised: None,
        distorted: Vec::new(),
        simulation: Some(sim.callgrind()),
        runs_raised_from: (blocks > opts.runs).then_some(opts.runs),
    })
}

/// The runs per cell with which every repetition of counts that vary
/// would decide (the most any of the pairs' comparisons asks for), when
/// one asks.
fn runs_for_repeats(pairs: &[PairDiff]) -> Option<usize> {
    pairs
        .iter()
        .flat_map(|p| {
            let functions = p.functions.iter().map(|f| &f.comparison);
            functions.chain(p.counted.iter().flatten())
        })
        .filter_map(|c| {
            c.note.as_ref()?.0.iter().find_map(|caveat| match caveat {
                comparison::Caveat::RepeatedCounts {
                    need: Some(need), ..
                } => Some(*need),
                _ => None,
            })
        })
        .max()
}

/// Every cell's summary over its whole blocks (run k of every cell in
/// block k).
fn summaries(cells: &[Cell], runs: &[Vec<RunStacks>]) -> Vec<CellProfile> {
    let blocks = runs.iter().map(Vec::len).min().unwrap_or(0);
    cells
        .iter()
        .zip(runs)
        .map(|(cell, r)| summarise(cell.name.clone(), r[..blocks].to_vec()))
        .collect()
}

/// Every cell against the reference `r`, at family-wise level `alpha`.
fn pairs_at(cells: &[CellProfile], r: usize, alpha: f64) -> Vec<PairDiff> {
    (0..cells.len())
        .filter(|&c| c != r)
        .map(|c| compare(cells, r, c, alpha))
        .collect()
}

fn check_run(cell: &Cell, raw: &sampler::RawRun) -> Result<()> {
    if raw.timed_out {
        return Err(ProfileError::TimedOut(cell.name.clone()).into());
    }
    if raw.exit_code == Some(127) && raw.samples.is_empty() {
        return Err(ProfileError::NotStarted(cell.name.clone()).into());
    }
    if let Some(code) = raw.exit_code.filter(|&c| c != 0) {
        return Err(ProfileError::ExitCode {
            name: cell.name.clone(),
            code,
        }
        .into());
    }
    if let Some(sig) = raw.signal {
        return Err(ProfileError::Signal {
            name: cell.name.clone(),
            signal: sig,
        }
        .into());
    }
    Ok(())
}

/// A cell none of whose runs was sampled, and which ran for less than
/// `BLOCKED_WALL` per run, is too short to profile. A longer one without
/// samples spent its time blocked: its empty on-CPU profile is the answer.
fn too_short(cell: &Cell, runs: &[RunStacks], setup: &sampler::Setup) -> Result<()> {
    let period = 1.0 / setup.frequency as f64;
    let walls: Vec<f64> = runs.iter().map(|r| r.wall).collect();
    let wall = crate::stats::median(&walls).unwrap_or(0.0);
    if runs.iter().all(|r| r.samples == 0) && wall < BLOCKED_WALL {
        return Err(ProfileError::TooShort {
            name: cell.name.clone(),
            wall: crate::units::time(wall),
            period: crate::units::time(period),
            frequency: setup.frequency,
        }
        .into());
    }
    Ok(())
}

fn stacks_of(
    raw: &sampler::RawRun,
    setup: &sampler::Setup,
    sym: &mut symbols::Symbolizer,
    jit: &jit::JitCode,
    interner: &mut Interner,
) -> RunStacks {
    let total_weight: u64 = raw
        .samples
        .iter()
        .filter(|s| s.off_cpu.is_none())
        .map(|s| s.weight)
        .sum();
    // cpu-clock periods are nanoseconds; cycles are shared out over the
    // run's measured CPU time.
    let seconds = |w: u64| match setup.event {
        sampler::Event::CpuClock => w as f64 * 1e-9,
        sampler::Event::Cycles => {
            if total_weight == 0 {
                0.0
            } else {
                w as f64 / total_weight as f64 * raw.cpu
            }
        }
    };
    let mut out = RunStacks {
        wall: raw.wall,
        cpu: raw.cpu,
        lost: raw.lost,
        samples: raw.samples.iter().filter(|s| s.off_cpu.is_none()).count() as u64,
        ..Default::default()
    };
    for (s, resolved) in raw.samples.iter().zip(&raw.resolved) {
        let mut ids: Vec<u32> = Vec::with_capacity(s.frames.len());
        for (&(addr, k), m) in s.frames.iter().zip(resolved) {
            // JIT code lives in anonymous memory (or none known).
            let in_file = m.as_ref().is_some_and(|m| jit::is_file(&m.path));
            if let Some(name) = (!k && !in_file).then(|| jit.name(s.pid, addr)).flatten() {
                ids.push(interner.id(&Frame {
                    function: name.to_string(),
                    module: "[jit]".into(),
                    file: None,
                }));
                continue;
            }
            // Innermost first: all but the last were inlined into the next.
            let frames = sym.frames(addr, k, m.as_ref());
            let last = frames.len().saturating_sub(1);
            for (i, f) in frames.iter().enumerate() {
                let id = interner.id(f);
                ids.push(if i < last { id | INLINED } else { id });
            }
        }
        ids.reverse();
        match s.off_cpu {
            None => *out.stacks.entry(ids).or_insert(0.0) += seconds(s.weight),
            Some(why) => {
                ids.push(
                    interner.id(&Frame {
                        function: match why {
                            sampler::OffCpu::Blocked => OFF_CPU_BLOCKED,
                            sampler::OffCpu::Runnable => OFF_CPU_RUNNABLE,
                        }
                        .into(),
                        module: "[off-cpu]".into(),
                        file: None,
                    }),
                );
                let secs = s.weight as f64 * 1e-9;
                *out.off_cpu.entry(ids).or_insert(0.0) += secs;
                match why {
                    sampler::OffCpu::Blocked => out.blocked += secs,
                    sampler::OffCpu::Runnable => out.runnable += secs,
                }
            }
        }
    }
    out
}

fn summarise(name: String, runs: Vec<RunStacks>) -> CellProfile {
    let n = runs.len().max(1) as f64;
    let mut selfs: HashMap<u32, f64> = HashMap::new();
    let mut totals: HashMap<u32, f64> = HashMap::new();
    // Summed, then divided: a count that repeats in every run is its own
    // mean exactly (1,045,000 / 6 added six times is not 1,045,000).
    for r in &runs {
        for (f, w) in r.self_time() {
            *selfs.entry(f).or_insert(0.0) += w;
        }
        for (f, w) in r.total_time() {
            *totals.entry(f).or_insert(0.0) += w;
        }
    }
    for v in selfs.values_mut().chain(totals.values_mut()) {
        *v /= n;
    }
    let mut functions: Vec<FunctionTime> = totals
        .iter()
        .map(|(&frame, &total)| FunctionTime {
            frame,
            self_time: selfs.get(&frame).copied().unwrap_or(0.0),
            total,
        })
        .collect();
    functions.sort_by(|a, b| {
        b.self_time
            .total_cmp(&a.self_time)
            .then(b.total.total_cmp(&a.total))
            .then(a.frame.cmp(&b.frame))
    });
    let mut off: HashMap<Vec<u32>, f64> = HashMap::new();
    for r in &runs {
        for (s, &w) in &r.off_cpu {
            *off.entry(s.clone()).or_insert(0.0) += w / n;
        }
    }
    let mut p = CellProfile {
        name,
        runs,
        functions,
        hot_stacks: Vec::new(),
        off_cpu_stacks: Vec::new(),
        blocked: 0.0,
        runnable: 0.0,
    };
    let mut hot: Vec<(Vec<u32>, f64)> = p.stacks_per_run().into_iter().collect();
    hot.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hot.truncate(10);
    p.hot_stacks = hot;
    let mut off: Vec<(Vec<u32>, f64)> = off.into_iter().collect();
    off.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    p.blocked = p.runs.iter().map(|r| r.blocked).fold(0.0, |a, b| a + b) / n;
    p.runnable = p.runs.iter().map(|r| r.runnable).fold(0.0, |a, b| a + b) / n;
    off.truncate(10);
    p.off_cpu_stacks = off;
    p
}

fn per_run(runs: &[RunStacks], f: impl Fn(&RunStacks) -> f64) -> Vec<f64> {
    runs.iter().map(f).collect()
}

/// The functions compared for a pair: those with at least `MIN_SHARE` of
/// the larger cell's sampled time as self time in either cell, the
/// `MAX_FUNCTIONS` largest. Chosen from the sizes, never from the
/// differences, so the selection does not bias the tests.
fn compared_functions(a: &CellProfile, b: &CellProfile) -> Vec<u32> {
    let floor = MIN_SHARE * a.sampled_per_run().max(b.sampled_per_run());
    let mut size: HashMap<u32, f64> = HashMap::new();
    for cell in [a, b] {
        for f in &cell.functions {
            let s = size.entry(f.frame).or_insert(0.0);
            *s = s.max(f.self_time);
        }
    }
    let mut fs: Vec<(u32, f64)> = size.into_iter().filter(|&(_, s)| s >= floor).collect();
    fs.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    fs.truncate(MAX_FUNCTIONS);
    fs.into_iter().map(|(f, _)| f).collect()
}

/// Compares the candidate cell with the baseline: measured wall and CPU
/// time, every compared function's self time per block, the hot path.
pub fn compare(cells: &[CellProfile], baseline: usize, candidate: usize, alpha: f64) -> PairDiff {
    let (a, b) = (&cells[baseline], &cells[candidate]);
    let settings = comparison::Settings::new(alpha, comparison::DEFAULT_PRECISION);
    let wall = comparison::compare_values(
        &per_run(&a.runs, |r| r.wall),
        &per_run(&b.runs, |r| r.wall),
        Design::Paired,
        &settings,
    );
    let cpu = comparison::compare_values(
        &per_run(&a.runs, |r| r.cpu),
        &per_run(&b.runs, |r| r.cpu),
        Design::Paired,
        &settings,
    );
    let compared = compared_functions(a, b);
    let simulated = a.runs.iter().chain(&b.runs).all(|r| r.counts.is_some()) && !a.runs.is_empty();
    let self_a: Vec<HashMap<u32, f64>> = a.runs.iter().map(RunStacks::self_time).collect();
    let self_b: Vec<HashMap<u32, f64>> = b.runs.iter().map(RunStacks::self_time).collect();
    let values = |runs: &[HashMap<u32, f64>], f: u32| -> Vec<f64> {
        runs.iter()
            .map(|m| m.get(&f).copied().unwrap_or(0.0))
            .collect()
    };
    // A program is deterministic when every count compared repeated in
    // every run of both cells: its totals and each function's. Then a
    // function's repeated count is its count, and any change is real (no
    // band). Otherwise (threads, seeds, the time) a count can take a few
    // values and repeat in a few runs by chance: Go's `main.main` counted
    // 440,061 in 12 of 15 runs and 331,103 in one (callgrind gave the
    // rest to `runtime.clone`), so a repetition is evidence only from the
    // runs the engine's `counts_vary` rule asks for, and an exact change
    // must still leave the precision band (measured: 6 of 10 A/A sessions
    // of a Go program called changes of 3 to 16 instructions real
    // without it).
    let deterministic = simulated
        && a.counts_repeat()
        && b.counts_repeat()
        && compared.iter().all(|&f| {
            comparison::constant(&values(&self_a, f)).is_some()
                && comparison::constant(&values(&self_b, f)).is_some()
        });
    // Counts: a function whose count repeats in every run of each cell
    // has an exact change; counts that vary get the exact rank tests.
    let counts = comparison::Settings {
        discrete: true,
        speed_modes: false,
        exact_counts: true,
        counts_vary: !deterministic,
        ..settings
    };
    let family = if simulated {
        comparison::Settings {
            family: compared.len().max(1),
            precision: if deterministic { 0.0 } else { counts.precision },
            ..counts
        }
    } else {
        comparison::Settings {
            family: compared.len().max(1),
            ..settings
        }
    };
    let mut functions: Vec<FunctionDiff> = compared
        .iter()
        .map(|&f| FunctionDiff {
            frame: f,
            comparison: comparison::compare_values(
                &values(&self_a, f),
                &values(&self_b, f),
                Design::Paired,
                &family,
            ),
        })
        .collect();
    functions.sort_by(|x, y| {
        let dx = if x.comparison.shift.is_nan() {
            0.0
        } else {
            x.comparison.shift.abs()
        };
        let dy = if y.comparison.shift.is_nan() {
            0.0
        } else {
            y.comparison.shift.abs()
        };
        dy.total_cmp(&dx).then(x.frame.cmp(&y.frame))
    });
    let counted = simulated.then(|| {
        let (ca, cb) = (a.counted(), b.counted());
        let side = |v: &[(f64, f64)], k: usize| -> Vec<f64> {
            v.iter().map(|t| if k == 0 { t.0 } else { t.1 }).collect()
        };
        [0, 1].map(|k| {
            comparison::compare_values(&side(&ca, k), &side(&cb, k), Design::Paired, &counts)
        })
    });
    // The difference the functions should account for: the CPU time
    // sampled, or the instructions counted.
    let measured = match &counted {
        Some([instructions, _]) => instructions.shift,
        None => cpu.shift,
    };
    let measured = if measured.is_finite() { measured } else { 0.0 };
    PairDiff {
        baseline,
        candidate,
        hot_path: hot_path(a, b, measured),
        wall,
        cpu,
        functions,
        counted,
    }
}

/// Inclusive seconds per run of every stack prefix (a node of the call tree).
fn prefix_times(cell: &CellProfile) -> HashMap<Vec<u32>, f64> {
    let mut m: HashMap<Vec<u32>, f64> = HashMap::new();
    for (s, w) in cell.stacks_per_run() {
        for k in 1..=s.len() {
            *m.entry(s[..k].to_vec()).or_insert(0.0) += w;
        }
    }
    m
}

/// Descends the call tree of the difference from the roots, always into
/// the child with the largest change, while that child still holds at
/// least half of the measured difference.
pub fn hot_path(a: &CellProfile, b: &CellProfile, measured: f64) -> Vec<u32> {
    if measured == 0.0 {
        return Vec::new();
    }
    let (pa, pb) = (prefix_times(a), prefix_times(b));
    let mut diff: HashMap<&Vec<u32>, f64> = HashMap::new();
    for (k, v) in &pb {
        *diff.entry(k).or_insert(0.0) += v;
    }
    for (k, v) in &pa {
        *diff.entry(k).or_insert(0.0) -= v;
    }
    let mut children: HashMap<&[u32], Vec<(&Vec<u32>, f64)>> = HashMap::new();
    for (k, &v) in &diff {
        children.entry(&k[..k.len() - 1]).or_default().push((k, v));
    }
    let mut path: Vec<u32> = Vec::new();
    while let Some(kids) = children.get(path.as_slice()) {
        // Largest change in the direction of the measured difference.
        let best = kids
            .iter()
            .map(|&(k, v)| (k, v * measured.signum()))
            .max_by(|x, y| x.1.total_cmp(&y.1).then(y.0.cmp(x.0)));
        match best {
            Some((k, v)) if v >= measured.abs() / 2.0 => path = k.clone(),
            _ => break,
        }
    }
    path
}

#[cfg(test)]
mod tests;
