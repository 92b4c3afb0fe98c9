//! What the scheduler tells a partition through its environment: which
//! partition it is (`--partition auto`) and which run it belongs to.

use super::partition::Partition;
use crate::error::{Result, SuiteError};

/// `--partition auto`: K and N from the first scheduler whose variables
/// are set. `partitions` is `--partitions N`, needed where the scheduler
/// gives only the index (Kubernetes Indexed Jobs).
pub fn auto_partition(
    env: &dyn Fn(&str) -> Option<String>,
    partitions: Option<u32>,
) -> Result<Partition> {
    let num = |name: &str| -> Result<Option<i64>> {
        match env(name).filter(|v| !v.trim().is_empty()) {
            None => Ok(None),
            Some(v) => v.trim().parse::<i64>().map(Some).map_err(|_| {
                SuiteError::SchedulerNotANumber {
                    name: name.into(),
                    value: v.clone(),
                }
                .into()
            }),
        }
    };
    let make = |k: i64, n: i64, from: &str| -> Result<Partition> {
        let fits = |v: i64| u32::try_from(v).ok();
        match (fits(k), fits(n)) {
            (Some(k), Some(n)) => {
                Partition::new(k, n).map_err(|e| SuiteError::SchedulerPartition {
                    from: from.into(),
                    source: Box::new(e),
                })
            }
            _ => Err(SuiteError::SchedulerOutOfRange {
                from: from.into(),
                index: k,
                count: n,
            }),
        }
        .map_err(Into::into)
    };
    // Slurm numbers array tasks as the user wrote --array (0-3, 1-4, ...).
    if let (Some(id), Some(count)) = (num("SLURM_ARRAY_TASK_ID")?, num("SLURM_ARRAY_TASK_COUNT")?) {
        let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        return make(id - min + 1, count, "SLURM_ARRAY_TASK_ID");
    }
    if let Some(index) = num("JOB_COMPLETION_INDEX")? {
        let n = partitions.ok_or(SuiteError::KubernetesNeedsPartitions)?;
        return make(index + 1, i64::from(n), "JOB_COMPLETION_INDEX");
    }
    // GitLab's `parallel:` counts from 1.
    if let (Some(k), Some(n)) = (num("CI_NODE_INDEX")?, num("CI_NODE_TOTAL")?) {
        return make(k, n, "CI_NODE_INDEX");
    }
    if let (Some(k), Some(n)) = (
        num("BUILDKITE_PARALLEL_JOB")?,
        num("BUILDKITE_PARALLEL_JOB_COUNT")?,
    ) {
        return make(k + 1, n, "BUILDKITE_PARALLEL_JOB");
    }
    Err(SuiteError::NoScheduler.into())
}

/// The run id from the scheduler, when there is one.
pub fn derived_run_id(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let get = |name: &str| {
        env(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    if let Some(job) = get("SLURM_ARRAY_JOB_ID") {
        return Some(format!("slurm-{job}"));
    }
    // Pods of a Job carry its name in their hostname: <job>-<index>-<suffix>.
    if get("JOB_COMPLETION_INDEX").is_some() {
        if let Some(job) = get("HOSTNAME").as_deref().and_then(kubernetes_job) {
            return Some(format!("k8s-{job}"));
        }
    }
    if let Some(run) = get("GITHUB_RUN_ID") {
        let attempt = get("GITHUB_RUN_ATTEMPT").unwrap_or_else(|| "1".into());
        return Some(format!("github-{run}-{attempt}"));
    }
    if let Some(p) = get("CI_PIPELINE_ID") {
        return Some(format!("gitlab-{p}"));
    }
    get("BUILDKITE_BUILD_ID").map(|b| format!("buildkite-{b}"))
}

/// "bench-x7k2q-3-abcde" -> "bench-x7k2q".
fn kubernetes_job(pod: &str) -> Option<&str> {
    let (rest, suffix) = pod.rsplit_once('-')?;
    let (job, index) = rest.rsplit_once('-')?;
    let ok = !job.is_empty()
        && index.chars().all(|c| c.is_ascii_digit())
        && !index.is_empty()
        && suffix.len() == 5
        && suffix
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    ok.then_some(job)
}

/// Run ids go into labels, file names and job names: keep them plain.
pub fn check_run_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    if ok {
        Ok(())
    } else {
        Err(SuiteError::BadRunId(id.into()).into())
    }
}

/// A fresh run id for a suite run that no scheduler names.
pub fn new_run_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .replace([':', '-'], "");
    format!(
        "{}-{:04x}",
        stamp.trim_end_matches('Z'),
        (now.subsec_nanos() ^ std::process::id()) & 0xffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn auto(vars: &[(&str, &str)], n: Option<u32>) -> Result<Partition> {
        auto_partition(&env(vars), n)
    }

    #[test]
    fn slurm_arrays_from_zero_or_one() {
        let p = auto(
            &[
                ("SLURM_ARRAY_TASK_ID", "0"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ],
            None,
        )
        .unwrap();
        assert_eq!(p, Partition { index: 1, count: 4 });
        let p = auto(
            &[
                ("SLURM_ARRAY_TASK_ID", "4"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ],
            None,
        )
        .unwrap();
        assert_eq!(p, Partition { index: 4, count: 4 });
        assert!(auto(
            &[
                ("SLURM_ARRAY_TASK_ID", "5"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ],
            None,
        )
        .is_err());
    }

    #[test]
    fn kubernetes_needs_the_count() {
        let vars = [("JOB_COMPLETION_INDEX", "2")];
        assert!(auto(&vars, None)
            .unwrap_err()
            .to_string()
            .contains("--partitions"));
        assert_eq!(
            auto(&vars, Some(3)).unwrap(),
            Partition { index: 3, count: 3 }
        );
        assert!(auto(&vars, Some(2)).is_err());
    }

    #[test]
    fn gitlab_and_buildkite() {
        assert_eq!(
            auto(&[("CI_NODE_INDEX", "2"), ("CI_NODE_TOTAL", "5")], None).unwrap(),
            Partition { index: 2, count: 5 }
        );
        assert_eq!(
            auto(
                &[
                    ("BUILDKITE_PARALLEL_JOB", "0"),
                    ("BUILDKITE_PARALLEL_JOB_COUNT", "3")
                ],
                None
            )
            .unwrap(),
            Partition { index: 1, count: 3 }
        );
        assert!(
            auto(&[("CI_NODE_INDEX", "x"), ("CI_NODE_TOTAL", "5")], None)
                .unwrap_err()
                .to_string()
                .contains("not a number")
        );
        assert!(auto(&[], None)
            .unwrap_err()
            .to_string()
            .contains("no scheduler"));
        // Slurm wins when several are set (a Slurm job started from CI).
        assert_eq!(
            auto(
                &[
                    ("CI_NODE_INDEX", "1"),
                    ("CI_NODE_TOTAL", "2"),
                    ("SLURM_ARRAY_TASK_ID", "3"),
                    ("SLURM_ARRAY_TASK_MIN", "0"),
                    ("SLURM_ARRAY_TASK_COUNT", "8"),
                ],
                None
            )
            .unwrap(),
            Partition { index: 4, count: 8 }
        );
    }

    #[test]
    fn run_ids_from_schedulers() {
        let id = |vars: &[(&str, &str)]| derived_run_id(&env(vars));
        assert_eq!(
            id(&[("SLURM_ARRAY_JOB_ID", "812")]).as_deref(),
            Some("slurm-812")
        );
        assert_eq!(
            id(&[
                ("JOB_COMPLETION_INDEX", "1"),
                ("HOSTNAME", "bench-x7k2q-1-ab3de")
            ])
            .as_deref(),
            Some("k8s-bench-x7k2q")
        );
        assert_eq!(id(&[("HOSTNAME", "bench-x7k2q-1-ab3de")]), None);
        assert_eq!(
            id(&[("GITHUB_RUN_ID", "99"), ("GITHUB_RUN_ATTEMPT", "2")]).as_deref(),
            Some("github-99-2")
        );
        assert_eq!(id(&[("CI_PIPELINE_ID", "7")]).as_deref(), Some("gitlab-7"));
        assert_eq!(
            id(&[("BUILDKITE_BUILD_ID", "b-1")]).as_deref(),
            Some("buildkite-b-1")
        );
        assert_eq!(id(&[]), None);
    }

    #[test]
    fn run_id_characters() {
        assert!(check_run_id("slurm-812").is_ok());
        assert!(check_run_id(&new_run_id()).is_ok());
        assert!(check_run_id("a b").is_err());
        assert!(check_run_id("").is_err());
        assert!(check_run_id("x/../y").is_err());
    }
}
