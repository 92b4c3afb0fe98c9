//! `cmdscope doctor`: the preflight checks of every session, on demand,
//! with `--fix` for what can be set (governor, turbo) and advice on CPU
//! isolation.

use crate::cli::doctor::DoctorArgs;
use crate::error::{exit, Error, Result};
use crate::run::preflight::{self, Check, Status};

/// A sysfs setting changed by `--fix`: where, from what, to what.
struct Change {
    path: String,
    from: String,
    to: String,
}

fn write_setting(path: &str, to: &str, changes: &mut Vec<Change>, failures: &mut Vec<String>) {
    let Ok(from) = std::fs::read_to_string(path) else {
        return;
    };
    let from = from.trim().to_string();
    if from == to {
        return;
    }
    match std::fs::write(path, to) {
        Ok(()) => changes.push(Change {
            path: path.into(),
            from,
            to: to.into(),
        }),
        Err(e) => failures.push(format!("{path}: {e}")),
    }
}

/// Sets the performance governor and turns turbo off where the kernel
/// allows; returns what changed and what could not be.
fn fix(cpus: &[usize]) -> (Vec<Change>, Vec<String>) {
    let mut changes = Vec::new();
    let mut failures = Vec::new();
    for c in cpus {
        let path = format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor");
        write_setting(&path, "performance", &mut changes, &mut failures);
    }
    write_setting(
        "/sys/devices/system/cpu/intel_pstate/no_turbo",
        "1",
        &mut changes,
        &mut failures,
    );
    write_setting(
        "/sys/devices/system/cpu/cpufreq/boost",
        "0",
        &mut changes,
        &mut failures,
    );
    (changes, failures)
}

const ISOLATION_ADVICE: &str = "\
To keep other work off the CPUs that measure: reserve them at boot
(isolcpus=2,3 nohz_full=2,3 on the kernel command line) or with a cpuset
(e.g. systemd: `systemctl set-property --runtime init.scope AllowedCPUs=0-1`
and the same for system.slice and user.slice), then run with `--cpus 2,3`.
Keep the SMT siblings of those CPUs idle too.";

pub fn run(args: &DoctorArgs) -> Result<i32> {
    let pinned = args
        .cpus
        .as_deref()
        .map(crate::run::plan::parse_cpus)
        .transpose()?;
    let cpus = pinned.clone().unwrap_or_else(preflight::allowed_cpus);
    let mut fixed = None;
    if args.fix {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(Error::Usage(
                "doctor --fix writes to /sys and needs root (try: sudo cmdscope doctor --fix)"
                    .into(),
            ));
        }
        fixed = Some(fix(&cpus));
    }
    let checks = preflight::collect(pinned.as_deref(), std::time::Duration::from_millis(500));
    let warned = checks.iter().any(|c| c.status == Status::Warn);
    let mut out = String::new();
    if args.json {
        let changes: Vec<serde_json::Value> = fixed
            .iter()
            .flat_map(|(c, _)| c)
            .map(|c| serde_json::json!({"path": c.path, "from": c.from, "to": c.to}))
            .collect();
        let failures: Vec<&String> = fixed.iter().flat_map(|(_, f)| f).collect();
        let doc = serde_json::json!({
            "status": if warned { "warn" } else { "ok" },
            "checks": checks,
            "changes": changes,
            "failures": failures,
        });
        out = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".into());
        out.push('\n');
    } else {
        out.push_str(&render(&checks));
        if let Some((changes, failures)) = &fixed {
            if changes.is_empty() && failures.is_empty() {
                out.push_str(
                    "\n--fix: nothing to change (no governor or turbo control, or already set)\n",
                );
            }
            if !changes.is_empty() {
                out.push_str("\n--fix changed (until the next reboot); to undo:\n");
                for c in changes {
                    out.push_str(&format!(
                        "  echo {} > {}    # now {}\n",
                        c.from, c.path, c.to
                    ));
                }
            }
            for f in failures {
                out.push_str(&format!("--fix could not write {f}\n"));
            }
        }
        out.push_str(&format!("\n{ISOLATION_ADVICE}\n"));
    }
    // A closed stdout (`| head`) ends the output quietly.
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), out.as_bytes());
    Ok(if warned { exit::FAILURE } else { exit::OK })
}

/// One line per check: status, name, detail.
pub fn render(checks: &[Check]) -> String {
    let mut out = String::new();
    for c in checks {
        let status = match c.status {
            Status::Ok => "ok",
            Status::Warn => "WARN",
            Status::Unknown => "unknown",
        };
        out.push_str(&format!("{status:<8} {:<15} {}\n", c.name, c.detail));
    }
    out
}
