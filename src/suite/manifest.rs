//! `cmdscope suite manifest`: what other schedulers need to run a suite's
//! partitions — a Kubernetes Indexed Job, a GitHub Actions matrix, a GitLab
//! `parallel:` job. The store URL always comes from a Secret or a CI
//! variable, never from the text printed here.
//!
//! YAML is written by hand; every value that comes from the user is a
//! double-quoted scalar produced by a JSON encoder (JSON strings are valid
//! YAML double-quoted scalars), so no value can break the structure.

use std::fmt::Write as _;

use super::file::Suite;
use crate::error::{Error, Result, SuiteError};

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn sh(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| format!("'{s}'"), |q| q.into_owned())
}

/// A name Kubernetes accepts (DNS label): lower-case letters, digits, '-'.
fn dns_name(text: &str) -> String {
    let mut s: String = text
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    s.truncate(40);
    let s = s.trim_matches('-').to_string();
    if s.is_empty() {
        "suite".into()
    } else {
        s
    }
}

/// Where the partitions run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A Kubernetes Indexed Job (with a ConfigMap holding the suite).
    Kubernetes,
    /// A GitHub Actions workflow with a matrix of partitions.
    GithubActions,
    /// A GitLab CI job with `parallel: N`.
    Gitlab,
}

/// What `suite manifest` was asked for.
#[derive(Clone, Debug)]
pub struct Manifest {
    /// The suite file, as the job will see it.
    pub file: std::path::PathBuf,
    pub target: Target,
    pub partitions: u32,
    /// Kubernetes: the Secret holding the store URL, and its key.
    pub store_secret: Option<String>,
    pub store_secret_key: String,
    /// Kubernetes: the container image.
    pub image: String,
    /// GitHub Actions: the runner labels (comma-separated).
    pub runs_on: String,
    pub run_id: Option<String>,
}

pub fn render(args: &Manifest, suite: &Suite) -> Result<String> {
    if let Some(id) = &args.run_id {
        super::scheduler::check_run_id(id)?;
    }
    let path = args.file.to_string_lossy();
    if args.target == Target::Kubernetes {
        let secret = args
            .store_secret
            .as_deref()
            .ok_or(SuiteError::KubernetesNeedsSecret)?;
        // Kubernetes' own rules for object names and Secret keys.
        let name_ok = !secret.is_empty()
            && secret.len() <= 253
            && secret
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
        let key = &args.store_secret_key;
        let key_ok = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !name_ok || !key_ok {
            return Err(SuiteError::BadSecret {
                secret: secret.into(),
                key: key.clone(),
            }
            .into());
        }
        let text = std::fs::read_to_string(&suite.path).map_err(|source| Error::Read {
            path: suite.path.clone(),
            source,
        })?;
        Ok(kubernetes(args, secret, &text))
    } else if args.target == Target::GithubActions {
        Ok(github(args, &path))
    } else {
        Ok(gitlab(args, &path))
    }
}

fn kubernetes(args: &Manifest, secret: &str, suite_text: &str) -> String {
    let stem = args
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = dns_name(&stem);
    let n = args.partitions;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Written by `cmdscope suite manifest --kubernetes`: {n} partitions, one pod per node.\n\
         # The store URL comes from the Secret {secret} (key {key}), e.g.\n\
         #   kubectl create secret generic {secret} --from-literal={key}='postgres://...'\n\
         # Create a run with: kubectl create -f THIS-FILE  (each Job gets a new name: the run id)",
        key = args.store_secret_key
    );
    let _ = writeln!(
        o,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}",
        q(&format!("cmdscope-suite-{name}"))
    );
    let _ = writeln!(o, "data:\n  suite.toml: {}", q(suite_text));
    o.push_str("---\n");
    // A failed partition must not stop the others (a Job-wide backoffLimit
    // would kill them): each index fails on its own, without retries;
    // `cmdscope status` names it and it can be run again by hand.
    let _ = writeln!(
        o,
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: {}\nspec:\n  \
         completionMode: Indexed\n  completions: {n}\n  parallelism: {n}\n  backoffLimitPerIndex: 0\n  \
         maxFailedIndexes: {n}\n  \
         template:\n    metadata:\n      labels:\n        cmdscope.dev/suite: {}\n    spec:\n      \
         restartPolicy: Never",
        q(&format!("cmdscope-{name}-")),
        q(&name)
    );
    // One measuring pod per node: pods of this suite repel each other.
    let _ = writeln!(
        o,
        "      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            \
         - topologyKey: kubernetes.io/hostname\n              labelSelector:\n                matchLabels:\n                  \
         cmdscope.dev/suite: {}",
        q(&name)
    );
    let container_args = [
        "run",
        "--suite",
        "/etc/cmdscope/suite.toml",
        "--partition",
        "auto",
        "--partitions",
        &n.to_string(),
        "--style",
        "basic",
    ]
    .iter()
    .map(|a| q(a))
    .collect::<Vec<_>>()
    .join(", ");
    let _ = writeln!(
        o,
        "      containers:\n        - name: cmdscope\n          image: {}\n          command: [\"cmdscope\"]\n          \
         args: [{container_args}]\n          env:\n            - name: CMDSCOPE_STORE\n              valueFrom:\n                \
         secretKeyRef:\n                  name: {}\n                  key: {}",
        q(&args.image),
        q(secret),
        q(&args.store_secret_key)
    );
    match &args.run_id {
        Some(id) => {
            let _ = writeln!(
                o,
                "            - name: CMDSCOPE_RUN_ID\n              value: {}",
                q(id)
            );
        }
        None => {
            let _ = writeln!(
                o,
                "            - name: CMDSCOPE_RUN_ID\n              valueFrom:\n                fieldRef:\n                  \
                 fieldPath: \"metadata.labels['batch.kubernetes.io/job-name']\""
            );
        }
    }
    let _ = writeln!(
        o,
        "          volumeMounts:\n            - name: suite\n              mountPath: /etc/cmdscope\n              \
         readOnly: true\n      volumes:\n        - name: suite\n          configMap:\n            name: {}",
        q(&format!("cmdscope-suite-{name}"))
    );
    o
}

fn github(args: &Manifest, path: &str) -> String {
    let n = args.partitions;
    let labels: Vec<String> = args
        .runs_on
        .split(',')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(q)
        .collect();
    let list: Vec<String> = (1..=n).map(|k| k.to_string()).collect();
    let run_id = args
        .run_id
        .clone()
        .unwrap_or_else(|| "github-${{ github.run_id }}-${{ github.run_attempt }}".into());
    let run_flag = match &args.run_id {
        Some(id) => format!(" --run-id {}", sh(id)),
        None => String::new(),
    };
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Written by `cmdscope suite manifest --github-actions`: a workflow for .github/workflows/.\n\
         # The store URL comes from the repository secret CMDSCOPE_STORE. Each runner\n\
         # takes one job at a time, so partitions on one machine never overlap."
    );
    let _ = writeln!(
        o,
        "name: cmdscope suite\n\"on\":\n  workflow_dispatch: {{}}\njobs:\n  partition:\n    strategy:\n      \
         fail-fast: false\n      matrix:\n        partition: [{}]\n    runs-on: [{}]\n    env:\n      \
         CMDSCOPE_STORE: ${{{{ secrets.CMDSCOPE_STORE }}}}\n    steps:\n      - uses: actions/checkout@v4\n      \
         - run: {}",
        list.join(", "),
        labels.join(", "),
        q(&format!(
            "cmdscope run --suite {} --partition ${{{{ matrix.partition }}}}/{n} --style basic{run_flag}",
            sh(path)
        ))
    );
    let _ = writeln!(
        o,
        "  status:\n    needs: partition\n    if: always()\n    runs-on: [{}]\n    env:\n      \
         CMDSCOPE_STORE: ${{{{ secrets.CMDSCOPE_STORE }}}}\n    steps:\n      - run: {}",
        labels.join(", "),
        q(&format!("cmdscope status --run {run_id}"))
    );
    o
}

fn gitlab(args: &Manifest, path: &str) -> String {
    let n = args.partitions;
    let run_flag = match &args.run_id {
        Some(id) => format!(" --run-id {}", sh(id)),
        None => String::new(),
    };
    let run_id = args
        .run_id
        .as_deref()
        .map(sh)
        .unwrap_or_else(|| "\"gitlab-$CI_PIPELINE_ID\"".into());
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Written by `cmdscope suite manifest --gitlab`: jobs for .gitlab-ci.yml.\n\
         # The store URL comes from the masked CI/CD variable CMDSCOPE_STORE."
    );
    let _ = writeln!(
        o,
        "cmdscope-suite:\n  tags: [\"benchmark\"]\n  parallel: {n}\n  script:\n    - {}",
        q(&format!(
            "cmdscope run --suite {} --partition auto --style basic{run_flag}",
            sh(path)
        ))
    );
    let _ = writeln!(
        o,
        "cmdscope-status:\n  stage: .post\n  tags: [\"benchmark\"]\n  when: always\n  script:\n    - {}",
        q(&format!("cmdscope status --run {run_id}"))
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use serde_yaml::Value;

    /// The manifest `suite manifest bench.toml --partitions 4 EXTRA` asks for.
    fn args(extra: &[&str]) -> Manifest {
        let mut argv = vec![
            "cmdscope",
            "suite",
            "manifest",
            "bench.toml",
            "--partitions",
            "4",
        ];
        argv.extend(extra);
        let crate::cli::Command::Suite(crate::cli::suite::SuiteArgs {
            command: crate::cli::suite::SuiteCommand::Manifest(m),
        }) = crate::cli::Cli::try_parse_from(argv).unwrap().command
        else {
            unreachable!()
        };
        crate::commands::suite::manifest(&m)
    }

    fn docs(text: &str) -> Vec<Value> {
        serde_yaml::Deserializer::from_str(text)
            .map(|d| Value::deserialize(d).unwrap())
            .collect()
    }
    use serde::Deserialize;

    const SUITE: &str = "[[benchmark]]\nname = \"a \\\"q\\\"\"\ncommand = \"true\"\n";

    #[test]
    fn kubernetes_indexed_job_with_the_store_from_a_secret() {
        let a = args(&[
            "--kubernetes",
            "--store-secret",
            "bench-db",
            "--image",
            "reg/cmdscope:1",
        ]);
        let y = kubernetes(&a, "bench-db", SUITE);
        assert!(!y.contains("postgres://") || y.contains("'postgres://...'"));
        let d = docs(&y);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0]["kind"], "ConfigMap");
        assert_eq!(d[0]["data"]["suite.toml"].as_str(), Some(SUITE));
        let job = &d[1];
        assert_eq!(job["kind"], "Job");
        assert_eq!(job["apiVersion"], "batch/v1");
        let spec = &job["spec"];
        assert_eq!(spec["completionMode"], "Indexed");
        assert_eq!(spec["completions"].as_u64(), Some(4));
        assert_eq!(spec["parallelism"].as_u64(), Some(4));
        assert_eq!(spec["backoffLimitPerIndex"].as_u64(), Some(0));
        assert_eq!(spec["maxFailedIndexes"].as_u64(), Some(4));
        assert!(spec.get("backoffLimit").is_none());
        let pod = &spec["template"]["spec"];
        let anti = &pod["affinity"]["podAntiAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"][0];
        assert_eq!(anti["topologyKey"], "kubernetes.io/hostname");
        assert_eq!(
            anti["labelSelector"]["matchLabels"]["cmdscope.dev/suite"],
            spec["template"]["metadata"]["labels"]["cmdscope.dev/suite"]
        );
        let c = &pod["containers"][0];
        assert_eq!(c["image"], "reg/cmdscope:1");
        let args: Vec<&str> = c["args"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(
            args,
            [
                "run",
                "--suite",
                "/etc/cmdscope/suite.toml",
                "--partition",
                "auto",
                "--partitions",
                "4",
                "--style",
                "basic"
            ]
        );
        let env = c["env"].as_sequence().unwrap();
        let store = env.iter().find(|e| e["name"] == "CMDSCOPE_STORE").unwrap();
        assert!(store.get("value").is_none(), "the URL is never inline");
        assert_eq!(store["valueFrom"]["secretKeyRef"]["name"], "bench-db");
        assert_eq!(store["valueFrom"]["secretKeyRef"]["key"], "url");
        let run = env.iter().find(|e| e["name"] == "CMDSCOPE_RUN_ID").unwrap();
        assert_eq!(
            run["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.labels['batch.kubernetes.io/job-name']"
        );
        assert_eq!(c["volumeMounts"][0]["mountPath"], "/etc/cmdscope");
        assert_eq!(
            pod["volumes"][0]["configMap"]["name"],
            d[0]["metadata"]["name"]
        );
        assert_eq!(pod["restartPolicy"], "Never");
    }

    #[test]
    fn secret_names_are_checked() {
        let suite = Suite {
            path: "/nonexistent/bench.toml".into(),
            benchmarks: Vec::new(),
        };
        let a = args(&["--kubernetes", "--store-secret", "Bad Name"]);
        let e = render(&a, &suite).unwrap_err().to_string();
        assert!(e.contains("not a valid Kubernetes Secret name"), "{e}");
        let a = args(&[
            "--kubernetes",
            "--store-secret",
            "db",
            "--store-secret-key",
            "a\nb",
        ]);
        assert!(render(&a, &suite).is_err());
    }

    #[test]
    fn github_matrix_and_gitlab_parallel() {
        let a = args(&["--github-actions", "--runs-on", "self-hosted, bench box"]);
        let d = docs(&github(&a, "suites/my bench.toml"));
        let job = &d[0]["jobs"]["partition"];
        let parts: Vec<u64> = job["strategy"]["matrix"]["partition"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(parts, [1, 2, 3, 4]);
        assert_eq!(job["runs-on"][1], "bench box");
        assert_eq!(
            job["env"]["CMDSCOPE_STORE"],
            "${{ secrets.CMDSCOPE_STORE }}"
        );
        assert_eq!(
            job["steps"][1]["run"],
            "cmdscope run --suite 'suites/my bench.toml' --partition ${{ matrix.partition }}/4 --style basic"
        );
        assert_eq!(d[0]["jobs"]["status"]["needs"], "partition");
        assert_eq!(
            d[0]["jobs"]["status"]["steps"][0]["run"],
            "cmdscope status --run github-${{ github.run_id }}-${{ github.run_attempt }}"
        );

        let a = args(&["--gitlab", "--run-id", "nightly-1"]);
        let d = docs(&gitlab(&a, "bench.toml"));
        assert_eq!(d[0]["cmdscope-suite"]["parallel"].as_u64(), Some(4));
        assert_eq!(
            d[0]["cmdscope-suite"]["script"][0],
            "cmdscope run --suite bench.toml --partition auto --style basic --run-id nightly-1"
        );
        assert_eq!(
            d[0]["cmdscope-status"]["script"][0],
            "cmdscope status --run nightly-1"
        );
        assert_eq!(d[0]["cmdscope-status"]["stage"], ".post");
    }
}
