//! A simulated history written into a store, one finished session per
//! point: what the examples that fill a store from series share.

use std::time::{Duration, SystemTime};

use cmdscope::metrics::{Metric, Sample};
use cmdscope::store::{Finish, Machine, NewCell, NewSession, Store};

/// The first session's start (seconds since the epoch); point `s` starts
/// 10 minutes after point `s - 1`.
pub const T0: u64 = 1_700_000_000;

/// One finished run of wall time `wall`, numbered `index`.
pub fn run(index: u64, wall: f64) -> Sample {
    let mut x = Sample::new(index);
    x.exit_code = Some(0);
    x.set(Metric::WallTime, wall);
    x
}

/// Point `s`: one finished session labelled `label`, holding `runs(i)`
/// for each of `cells`.
pub fn point_session(
    store: &mut Store,
    s: usize,
    label: (&str, String),
    command_line: &str,
    cells: &[NewCell],
    runs: impl Fn(usize) -> Vec<Sample>,
) -> Result<(), String> {
    let id = store
        .begin_session(&NewSession {
            started: SystemTime::UNIX_EPOCH + Duration::from_secs(T0 + s as u64 * 600),
            source: "run".into(),
            command_line: command_line.into(),
            order: None,
            seed: None,
            shell: None,
            machine: Machine::current(),
            labels: vec![(label.0.into(), label.1)],
            settings: None,
        })
        .map_err(|e| e.0)?;
    let ids = store.add_cells(id, cells).map_err(|e| e.0)?;
    for (i, cell) in ids.iter().enumerate() {
        store.add_runs(*cell, 0, &runs(i)).map_err(|e| e.0)?;
    }
    store
        .finish_session(
            id,
            &Finish {
                status: "finished".into(),
                stop_reason: None,
                shell_overhead: None,
                preflight: None,
                outcome: None,
            },
        )
        .map_err(|e| e.0)
}
