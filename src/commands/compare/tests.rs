//! The subcommand's own checks: the format names and the options' rules.

use super::*;
use crate::analysis::tables::fixtures::slowdown_pair;

#[test]
fn format_names_are_the_flags() {
    use clap::ValueEnum;
    assert_eq!(
        CompareFormat::from_str("markdown", false),
        Ok(CompareFormat::Markdown)
    );
    assert_eq!(
        CompareFormat::from_str("json", false),
        Ok(CompareFormat::Json)
    );
    assert!(CompareFormat::from_str("md", false).is_err());
    assert!(CompareFormat::from_str("xml", false).is_err());
}

#[test]
fn bad_options_are_usage_errors() {
    let d = slowdown_pair();
    for o in [
        CompareOptions {
            alpha: 0.0,
            ..CompareOptions::default()
        },
        // The same rule as run and check: alpha in (0, 0.5).
        CompareOptions {
            alpha: 0.5,
            ..CompareOptions::default()
        },
        CompareOptions {
            level: 1.0,
            ..CompareOptions::default()
        },
        CompareOptions {
            fail_if_slower: Some(-1.0),
            ..CompareOptions::default()
        },
        CompareOptions {
            fail_if_slower: Some(f64::NAN),
            ..CompareOptions::default()
        },
    ] {
        let e = compare(&d, &o).unwrap_err();
        assert!(matches!(e, Error::Options(_) | Error::Gate(_)), "{e:?}");
        assert_eq!(e.exit_code(), 2);
    }
    let e = compare(&[], &CompareOptions::default()).unwrap_err();
    assert!(matches!(e, Error::Gate(GateError::NoResultsFiles)));
}

#[test]
fn a_gated_metric_must_be_in_the_files_and_lower_is_better() {
    use crate::analysis::tables::fixtures::{bench, dataset, series};
    let d = vec![dataset(
        "a.json",
        vec![bench(
            "x",
            vec![
                series("time_wall_clock", "s", false, vec![0.1, 0.2, 0.3]),
                series("throughput", "1/s", true, vec![5.0, 6.0, 7.0]),
            ],
        )],
    )];
    let named = |m: &str| CompareOptions {
        fail_if_slower: Some(1.0),
        metric: Some(m.into()),
        ..CompareOptions::default()
    };
    let e = compare(&d, &named("cycles")).unwrap_err().to_string();
    assert!(
        e.contains("--metric cycles: no such metric in the files (they hold time_wall_clock)"),
        "{e}"
    );
    let e = compare(&d, &named("throughput")).unwrap_err().to_string();
    assert!(e.contains("higher is better"), "{e}");
    assert!(compare(&d, &named("time_wall_clock")).is_ok());
}
