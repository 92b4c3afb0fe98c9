//! `cmdscope doctor` as text and JSON: the preflight checks, what `--fix`
//! changed or could not change, and the advice on CPU isolation.

use crate::run::preflight::{Check, Status};

/// A sysfs setting changed by `--fix`: where, from what, to what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub from: String,
    pub to: String,
}

/// A sysfs setting `--fix` could not write, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub path: String,
    pub error: String,
}

/// What `--fix` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fixed {
    pub changes: Vec<Change>,
    pub failures: Vec<Failure>,
}

const ISOLATION_ADVICE: &str = "\
To keep other work off the CPUs that measure: reserve them at boot
(isolcpus=2,3 nohz_full=2,3 on the kernel command line) or with a cpuset
(e.g. systemd: `systemctl set-property --runtime init.scope AllowedCPUs=0-1`
and the same for system.slice and user.slice), then run with `--cpus 2,3`.
Keep the SMT siblings of those CPUs idle too.";

/// One line per check (status, name, detail), then what `--fix` did when
/// it was asked, then the isolation advice.
pub fn text(checks: &[Check], fixed: Option<&Fixed>) -> String {
    let mut out = String::new();
    for c in checks {
        let status = match c.status {
            Status::Ok => "ok",
            Status::Warn => "WARN",
            Status::Unknown => "unknown",
        };
        out.push_str(&format!("{status:<8} {:<15} {}\n", c.name, c.detail));
    }
    if let Some(Fixed { changes, failures }) = fixed {
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
            out.push_str(&format!("--fix could not write {}: {}\n", f.path, f.error));
        }
    }
    out.push_str(&format!("\n{ISOLATION_ADVICE}\n"));
    out
}

/// The checks and what `--fix` did as one JSON document; `warned`: whether
/// a check warned (the command's exit status).
pub fn json(checks: &[Check], warned: bool, fixed: Option<&Fixed>) -> String {
    let changes: Vec<serde_json::Value> = fixed
        .iter()
        .flat_map(|f| &f.changes)
        .map(|c| serde_json::json!({"path": c.path, "from": c.from, "to": c.to}))
        .collect();
    let failures: Vec<String> = fixed
        .iter()
        .flat_map(|f| &f.failures)
        .map(|f| format!("{}: {}", f.path, f.error))
        .collect();
    let doc = serde_json::json!({
        "status": if warned { "warn" } else { "ok" },
        "checks": checks,
        "changes": changes,
        "failures": failures,
    });
    let mut out = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".into());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks() -> Vec<Check> {
        vec![
            Check {
                name: "governor".into(),
                status: Status::Warn,
                detail: "powersave on CPU 0".into(),
            },
            Check {
                name: "busy_processes".into(),
                status: Status::Ok,
                detail: "none".into(),
            },
            Check {
                name: "thermal".into(),
                status: Status::Unknown,
                detail: "no counters".into(),
            },
        ]
    }

    fn fixed() -> Fixed {
        Fixed {
            changes: vec![Change {
                path: "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor".into(),
                from: "powersave".into(),
                to: "performance".into(),
            }],
            failures: vec![Failure {
                path: "/sys/devices/system/cpu/cpufreq/boost".into(),
                error: "Permission denied (os error 13)".into(),
            }],
        }
    }

    #[test]
    fn the_text_lists_checks_then_the_fix_then_the_advice() {
        let out = text(&checks(), Some(&fixed()));
        let expected = format!(
            "WARN     governor        powersave on CPU 0
ok       busy_processes  none
unknown  thermal         no counters

--fix changed (until the next reboot); to undo:
  echo powersave > /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor    # now performance
--fix could not write /sys/devices/system/cpu/cpufreq/boost: Permission denied (os error 13)

{ISOLATION_ADVICE}
"
        );
        assert_eq!(out, expected);
        let nothing = text(&checks()[..1], Some(&Fixed::default()));
        assert!(
            nothing.starts_with(
                "WARN     governor        powersave on CPU 0\n\n--fix: nothing to change \
                 (no governor or turbo control, or already set)\n\nTo keep"
            ),
            "{nothing}"
        );
        let plain = text(&checks()[..1], None);
        assert_eq!(
            plain,
            format!("WARN     governor        powersave on CPU 0\n\n{ISOLATION_ADVICE}\n")
        );
    }

    #[test]
    fn the_json_holds_the_status_checks_changes_and_failures() {
        let doc: serde_json::Value =
            serde_json::from_str(&json(&checks(), true, Some(&fixed()))).unwrap();
        assert_eq!(doc["status"], "warn");
        assert_eq!(doc["checks"][0]["status"], "warn");
        assert_eq!(doc["checks"][2]["detail"], "no counters");
        assert_eq!(
            doc["changes"],
            serde_json::json!([{
                "path": "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
                "from": "powersave",
                "to": "performance",
            }])
        );
        assert_eq!(
            doc["failures"],
            serde_json::json!([
                "/sys/devices/system/cpu/cpufreq/boost: Permission denied (os error 13)"
            ])
        );
        let doc: serde_json::Value = serde_json::from_str(&json(&checks(), false, None)).unwrap();
        assert_eq!(doc["status"], "ok");
        assert_eq!(doc["changes"], serde_json::json!([]));
        assert_eq!(doc["failures"], serde_json::json!([]));
    }
}
