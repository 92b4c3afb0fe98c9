//! Why `--profile` could not sample, or made no profile worth drawing.

/// A profile that cannot be made (exit 2).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProfileError {
    /// `level`: kernel.perf_event_paranoid as read ("unknown" if not).
    #[error("--profile: the kernel refuses sampling (kernel.perf_event_paranoid = {level}, which forbids perf events to everyone, root included on this kernel); allow it with 'sysctl kernel.perf_event_paranoid=1'")]
    ParanoidForbidsAll { level: String },
    #[error("--profile: the kernel refuses sampling even to root (kernel.perf_event_paranoid = {level}; a container or seccomp policy may block perf_event_open); allow perf events for this container or run on the host")]
    RefusedToRoot { level: String },
    #[error("--profile: the kernel refuses sampling (kernel.perf_event_paranoid = {level}, no CAP_PERFMON); run as root, grant CAP_PERFMON, or 'sysctl kernel.perf_event_paranoid=1'")]
    NotPermitted { level: String },
    #[error("--profile: perf events are not available (perf_event_open is missing: a kernel without CONFIG_PERF_EVENTS, or a container that blocks it); profile on a kernel or container that has them")]
    NoPerfEvents,
    #[error("--profile: this kernel offers neither hardware cycles nor the cpu-clock software event for sampling")]
    NoSamplingEvent,
    #[error("--profile: perf_event_open failed: {}", std::io::Error::from_raw_os_error(*.0))]
    PerfEventOpen(i32),
    /// `reason`: the mapping's error as the system words it.
    #[error("--profile: cannot map the sampling buffer: {0} (locked memory: raise 'ulimit -l' or kernel.perf_event_mlock_kb)")]
    MapBuffer(String),
    #[error("--frequency {frequency}: the kernel allows at most {max} samples a second (kernel.perf_event_max_sample_rate); use --frequency {max} or less")]
    FrequencyAboveLimit { frequency: u64, max: u64 },
    #[error("--profile needs --runs 3 or more to sample (2 are enough with --simulate)")]
    NeedsThreeRuns,
    #[error("--profile does not apply --workdir yet; profile without it")]
    Workdir,
    #[error("'{0}' ran past --timeout and was killed; profile it without --timeout or with a longer one")]
    TimedOut(String),
    #[error("'{0}' could not be started (exit code 127)")]
    NotStarted(String),
    #[error("'{name}' failed with exit code {code}; profiles are made of successful runs only")]
    ExitCode { name: String, code: i32 },
    #[error("'{name}' was killed by signal {signal}; profiles are made of successful runs only")]
    Signal { name: String, signal: i32 },
    /// `wall`: the median run, `period`: between samples, both as
    /// `units::time` words them (the error module sits below `units`).
    #[error("'{name}' ran {wall} per run, too short to sample once every {period} ({frequency} Hz); profile a longer command or raise --frequency")]
    TooShort {
        name: String,
        wall: String,
        period: String,
        frequency: u64,
    },
    #[error("cannot draw the flame graph: {0}")]
    FlameGraph(String),
}
