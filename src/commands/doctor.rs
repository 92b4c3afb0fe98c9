//! `cmdscope doctor`: the preflight checks of every session, on demand,
//! with `--fix` for what can be set (governor, turbo) and advice on CPU
//! isolation.

use crate::cli::doctor::DoctorArgs;
use crate::error::{exit, CliError, Result};
use crate::report::doctor::{Change, Failure, Fixed};
use crate::run::preflight::{self, Status};

fn write_setting(path: &str, to: &str, fixed: &mut Fixed) {
    let Ok(from) = std::fs::read_to_string(path) else {
        return;
    };
    let from = from.trim().to_string();
    if from == to {
        return;
    }
    match std::fs::write(path, to) {
        Ok(()) => fixed.changes.push(Change {
            path: path.into(),
            from,
            to: to.into(),
        }),
        Err(e) => fixed.failures.push(Failure {
            path: path.into(),
            error: e.to_string(),
        }),
    }
}

/// Sets the performance governor and turns turbo off where the kernel
/// allows; returns what changed and what could not be.
fn fix(cpus: &[usize]) -> Fixed {
    let mut fixed = Fixed::default();
    for c in cpus {
        let path = format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor");
        write_setting(&path, "performance", &mut fixed);
    }
    write_setting(
        "/sys/devices/system/cpu/intel_pstate/no_turbo",
        "1",
        &mut fixed,
    );
    write_setting("/sys/devices/system/cpu/cpufreq/boost", "0", &mut fixed);
    fixed
}

pub fn run(args: &DoctorArgs) -> Result<i32> {
    let pinned = args
        .cpus
        .as_deref()
        .map(crate::run::plan::parse_cpus)
        .transpose()?;
    // A CPU this process may not use has no checks to pass: refused, as
    // `run --cpus` refuses it.
    if let Some(list) = &pinned {
        crate::exec::check_cpus(list)?;
    }
    let cpus = pinned.clone().unwrap_or_else(preflight::allowed_cpus);
    let mut fixed = None;
    if args.fix {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(CliError::DoctorFixNeedsRoot.into());
        }
        fixed = Some(fix(&cpus));
    }
    let checks = preflight::collect(pinned.as_deref(), std::time::Duration::from_millis(500));
    let warned = checks.iter().any(|c| c.status == Status::Warn);
    let out = if args.json {
        crate::report::doctor::json(&checks, warned, fixed.as_ref())
    } else {
        crate::report::doctor::text(&checks, fixed.as_ref())
    };
    crate::output::print(&out);
    Ok(if warned { exit::FAILURE } else { exit::OK })
}
