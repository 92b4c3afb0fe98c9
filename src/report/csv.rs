//! CSV export: one row per command, hyperfine's columns first, then
//! cmdscope's medians (with `--monitor`, each count's `monitor_NAME_median`)
//! and the parameters; or, in the hyperfine front door, hyperfine's table
//! as it is (its columns, then the parameters by name) with cmdscope's
//! medians after it.

use super::{Exporter, Report};
use crate::error::{Error, Result};
use crate::metrics::Metric;

/// The `--export-csv` table.
pub struct Csv {
    pub columns: Columns,
}

/// Where the parameters' columns go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Columns {
    /// After cmdscope's medians, in the plan's order.
    Cmdscope,
    /// Right after hyperfine's `max`, sorted by name, as hyperfine writes
    /// them (a script reading hyperfine's columns by position reads ours).
    Hyperfine,
}

impl Exporter for Csv {
    fn render(&self, report: &Report) -> Result<String> {
        render(report, self.columns)
    }
}

fn render(report: &Report, columns: Columns) -> Result<String> {
    let (session, analyses) = (report.session, report.analyses);
    let mut params: Vec<String> = Vec::new();
    for r in &session.results {
        for (k, _) in &r.cell.parameters {
            if !params.contains(k) {
                params.push(k.clone());
            }
        }
    }
    if columns == Columns::Hyperfine {
        params.sort();
    }
    // Where the parameters' columns start: after hyperfine's own, or last.
    let at = |header_or_row: &mut Vec<String>, params: Vec<String>, hyperfines: usize| {
        let end = match columns {
            Columns::Hyperfine => hyperfines,
            Columns::Cmdscope => header_or_row.len(),
        };
        header_or_row.splice(end..end, params);
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    // hyperfine's columns: its JSON's summary fields, in their order.
    let hyperfines = &super::json::HYPERFINE_RESULT_FIELDS[..super::json::HYPERFINE_SUMMARY_FIELDS];
    let mut header: Vec<String> = hyperfines
        .iter()
        .chain(&[
            "median_ci_low",
            "median_ci_high",
            "runs",
            "memory_peak_resident_median",
            "io_read_bytes_median",
            "io_write_bytes_median",
        ])
        .map(|s| s.to_string())
        .collect();
    let monitor = |cell: usize| {
        report
            .monitor
            .map(|c| crate::monitor::medians(c, cell))
            .unwrap_or_default()
    };
    header.extend(
        monitor(0)
            .into_iter()
            .map(|(name, _)| format!("{name}_median")),
    );
    at(
        &mut header,
        params.iter().map(|p| format!("parameter_{p}")).collect(),
        hyperfines.len(),
    );
    let csv_err = |e: csv::Error| Error::Failed(format!("CSV export: {e}"));
    w.write_record(&header).map_err(csv_err)?;
    for (i, (r, a)) in session.results.iter().zip(analyses).enumerate() {
        let get = |m: Metric, f: fn(&crate::stats::Summary) -> f64| {
            a.get(m)
                .map(|s| f(&s.summary).to_string())
                .unwrap_or_default()
        };
        let (lo, hi) = match a.get(Metric::WallTime).map(|m| &m.median_ci) {
            Some(Ok(e)) => (e.low.to_string(), e.high.to_string()),
            _ => (String::new(), String::new()),
        };
        let mut row = vec![
            super::json::hyperfine_command(&r.cell).to_string(),
            get(Metric::WallTime, |s| s.mean),
            get(Metric::WallTime, |s| s.stddev),
            get(Metric::WallTime, |s| s.median),
            get(Metric::UserTime, |s| s.mean),
            get(Metric::SystemTime, |s| s.mean),
            get(Metric::WallTime, |s| s.min),
            get(Metric::WallTime, |s| s.max),
            lo,
            hi,
            a.runs.to_string(),
            get(Metric::PeakRss, |s| s.median),
            get(Metric::IoReadBytes, |s| s.median),
            get(Metric::IoWriteBytes, |s| s.median),
        ];
        row.extend(
            monitor(i)
                .into_iter()
                .map(|(_, m)| m.map(|v| v.to_string()).unwrap_or_default()),
        );
        let values = params
            .iter()
            .map(|p| {
                r.cell
                    .parameters
                    .iter()
                    .find(|(k, _)| k == p)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            })
            .collect();
        at(&mut row, values, hyperfines.len());
        w.write_record(&row).map_err(csv_err)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::Failed(format!("CSV export: {e}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::{mean, two_cells, FAST};

    const CMDSCOPE: Csv = Csv {
        columns: Columns::Cmdscope,
    };

    #[test]
    fn one_row_per_command_under_hyperfines_header() {
        let f = two_cells();
        let text = CMDSCOPE.render(&f.report()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(
            lines[0],
            "command,mean,stddev,median,user,system,min,max,median_ci_low,median_ci_high,runs,\
             memory_peak_resident_median,io_read_bytes_median,io_write_bytes_median"
        );
        let mut reader = ::csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<::csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        assert_eq!(&rows[0][0], "fast");
        // The pipe needs no escaping in CSV; the field is the name as given.
        assert_eq!(&rows[1][0], "slow | grep x");
        let mean_fast: f64 = rows[0][1].parse().unwrap();
        assert!((mean_fast - mean(&FAST)).abs() < 1e-12);
        let slow: Vec<f64> = FAST.iter().map(|w| 2.0 * w + 0.001).collect();
        let mean_slow: f64 = rows[1][1].parse().unwrap();
        assert!((mean_slow - mean(&slow)).abs() < 1e-12);
        assert_eq!(&rows[0][4], "0.002");
        assert_eq!(&rows[0][6], "0.0097");
        assert_eq!(&rows[0][10], "8");
        assert_eq!(&rows[0][11], "4194304");
        // Not measured: empty, not zero.
        assert_eq!(&rows[0][12], "");
    }

    #[test]
    fn monitor_counts_are_columns_like_the_other_medians() {
        let f = two_cells();
        let counts = crate::monitor::Counts {
            watch: crate::run::settings::MonitorSettings {
                names: vec!["hits".into(), "errs".into()],
                ..Default::default()
            },
            per_run: vec![
                vec![vec![1.0, 3.0, 2.0], vec![0.0, 0.0, f64::NAN]],
                vec![vec![5.0, 7.0, 9.0], vec![]],
            ],
            ..Default::default()
        };
        let mut f2 = two_cells();
        f2.session.results[1].cell.parameters = vec![("n".into(), "64".into())];
        let report = Report {
            monitor: Some(&counts),
            ..f2.report()
        };
        let text = CMDSCOPE.render(&report).unwrap();
        let mut reader = ::csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(
            header[14..],
            ["monitor_hits_median", "monitor_errs_median", "parameter_n"]
        );
        let rows: Vec<::csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        assert_eq!((&rows[0][14], &rows[0][15]), ("2", "0"));
        // No counted run: empty, not zero.
        assert_eq!((&rows[1][14], &rows[1][15], &rows[1][16]), ("7", "", "64"));
        // Without a monitor the header is hyperfine's and cmdscope's only.
        assert!(!CMDSCOPE.render(&f.report()).unwrap().contains("monitor_"));
    }

    #[test]
    fn parameters_get_their_own_columns() {
        let mut f = two_cells();
        f.session.results[1].cell.parameters = vec![("n".into(), "64".into())];
        let text = CMDSCOPE.render(&f.report()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with(",parameter_n"), "{}", lines[0]);
        assert!(lines[1].ends_with(','), "{}", lines[1]);
        assert!(lines[2].ends_with(",64"), "{}", lines[2]);
    }

    #[test]
    fn hyperfines_layout_puts_the_parameters_by_name_after_max() {
        let mut f = two_cells();
        f.session.results[0].cell.parameters =
            vec![("z".into(), "1".into()), ("a".into(), "x".into())];
        f.session.results[1].cell.parameters =
            vec![("z".into(), "2".into()), ("a".into(), "y".into())];
        let text = Csv {
            columns: Columns::Hyperfine,
        }
        .render(&f.report())
        .unwrap();
        let mut reader = ::csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(
            header[..10].join(","),
            "command,mean,stddev,median,user,system,min,max,parameter_a,parameter_z"
        );
        // cmdscope's columns follow, as in its own layout.
        assert_eq!(header[10], "median_ci_low");
        let rows: Vec<::csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        assert_eq!((&rows[0][8], &rows[0][9]), ("x", "1"));
        assert_eq!((&rows[1][8], &rows[1][9]), ("y", "2"));
        // The same figures as cmdscope's layout, moved.
        let own = CMDSCOPE.render(&f.report()).unwrap();
        let mut own = ::csv::Reader::from_reader(own.as_bytes());
        let first = own.records().next().unwrap().unwrap();
        assert_eq!(
            rows[0].iter().take(8).collect::<Vec<_>>(),
            first.iter().take(8).collect::<Vec<_>>()
        );
        assert_eq!(&rows[0][10], &first[8]);
    }
}
