use super::*;

const CMDSCOPE: &str = include_str!("../../../../tests/data/cmdscope_v2.json");
const HYPERFINE2: &str = include_str!("../../../../tests/data/hyperfine_v2.json");
const HYPERFINE1: &str = include_str!("../../../../tests/data/hyperfine_v1.json");
const GO: &str = include_str!("../../../../tests/data/go_bench.txt");
const GO_TWO_PKGS: &str = include_str!("../../../../tests/data/go_two_pkgs.txt");

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-300)
}

fn assert_values(series: &Series, expected: &[f64]) {
    assert_eq!(series.values.len(), expected.len(), "{series:?}");
    for (a, b) in series.values.iter().zip(expected) {
        assert!(close(*a, *b), "{} vs {} in {series:?}", a, b);
    }
}

fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn err(text: &str) -> String {
    let e = parse_dataset(text, "input").expect_err("input should be rejected");
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "error must be one line: {msg:?}");
    msg
}

// ----- cmdscope ---------------------------------------------------------------

#[test]
fn cmdscope_json() {
    let d = parse_dataset(CMDSCOPE, "base.json").unwrap();
    assert_eq!(d.format, "cmdscope");
    assert_eq!(d.source, "base.json");
    assert_eq!(d.benchmarks.len(), 2);

    let ruby = &d.benchmarks[0];
    assert_eq!(ruby.name, "ruby-system", "display name wins over command");
    assert_eq!(
        ruby.parameters,
        params(&[("user", "root"), ("calls", "10000")]),
        "parameters keep their declared order"
    );
    let metrics: Vec<&str> = ruby.series.iter().map(|s| s.metric.as_str()).collect();
    assert_eq!(
        metrics,
        [
            "time_wall_clock",
            "time_user",
            "time_system",
            "time_cpu",
            "memory_peak_resident",
            "page_faults_minor",
            "context_switches_voluntary",
            "io_write_bytes"
        ]
    );
    let wall = ruby.series("time_wall_clock").unwrap();
    assert_eq!(wall.unit, "s");
    assert!(!wall.higher_is_better);
    assert_values(wall, &[0.512, 0.508, 0.515]);
    let rss = ruby.series("memory_peak_resident").unwrap();
    assert_eq!(rss.unit, "B");
    assert_values(rss, &[24117248.0, 24121344.0, 24113152.0]);
    let faults = ruby.series("page_faults_minor").unwrap();
    assert_eq!(faults.unit, "");
    assert_values(faults, &[5012.0, 5009.0, 5015.0]);

    let rust = &d.benchmarks[1];
    assert_eq!(rust.name, "./rust-client --cold", "command when no name");
    assert!(rust.parameters.is_empty());
    assert_values(rust.series("time_wall_clock").unwrap(), &[0.0021, 0.0019]);
    // Measured in one run only: one sample.
    assert_values(rust.series("cpu_cycles").unwrap(), &[4100000.0]);
}

#[test]
fn cmdscope_timed_out_runs_are_left_out() {
    let text = r#"{"tool": "cmdscope", "schema_version": 2, "results": [{"command": "x",
        "measurements": [
          {"run_index": 0, "timed_out": false, "time_wall_clock": {"value": 1.0, "unit": "s"}},
          {"run_index": 1, "timed_out": true, "time_wall_clock": {"value": 0.5, "unit": "s"}},
          {"run_index": 2, "time_wall_clock": {"value": 1.2, "unit": "s"}}
        ]}]}"#;
    let d = parse_dataset(text, "x").unwrap();
    assert_values(
        d.benchmarks[0].series("time_wall_clock").unwrap(),
        &[1.0, 1.2],
    );
}

#[test]
fn cmdscope_floor_is_read() {
    let text = r#"{"tool": "cmdscope", "schema_version": 2,
        "session": {"memory_peak_resident_floor": 7159808.0},
        "results": [{"command": "x", "measurements": [
          {"time_wall_clock": {"value": 1.0, "unit": "s"}}]}]}"#;
    assert_eq!(parse_dataset(text, "x").unwrap().rss_floor, Some(7159808.0));
    assert_eq!(parse_dataset(HYPERFINE2, "x").unwrap().rss_floor, None);
}

#[test]
fn cmdscope_rejects_future_schema() {
    let text = r#"{"schema_version": 3, "tool": "cmdscope", "results": []}"#;
    assert_eq!(
        err(text),
        "schema_version: unsupported cmdscope schema version 3 (this build reads 2)"
    );
}

// ----- hyperfine 2 ---------------------------------------------------------------

#[test]
fn hyperfine2_json() {
    let d = parse_dataset(HYPERFINE2, "hf2.json").unwrap();
    assert_eq!(d.format, "hyperfine-2");
    assert_eq!(d.benchmarks.len(), 2);
    let b = &d.benchmarks[0];
    assert_eq!(b.name, "sha256sum -b {batch}");
    assert_eq!(b.parameters, params(&[("batch", "64")]));
    // Units are converted to the metric's base unit ("millisecond" -> s).
    assert_values(
        b.series("time_wall_clock").unwrap(),
        &[0.0214, 0.021, 0.022],
    );
    assert_values(b.series("time_user").unwrap(), &[0.015, 0.015, 0.015]);
    // hyperfine 2's `peak_memory_usage` is cmdscope's memory_peak_resident;
    // a null value is a run where it was not measured.
    let rss = b.series("memory_peak_resident").unwrap();
    assert_eq!(rss.unit, "B");
    assert_values(rss, &[2048.0 * 1024.0, 2101248.0]);
    assert_eq!(d.benchmarks[1].parameters, params(&[("batch", "128")]));
    assert_values(
        d.benchmarks[1].series("time_wall_clock").unwrap(),
        &[0.018, 0.019],
    );
}

#[test]
fn hyperfine2_unknown_metric_is_kept() {
    let text = r#"{"results": [{"command": "x", "measurements": [
        {"time_wall_clock": {"value": 1, "unit": "second"},
         "gc_pauses": {"value": 3, "unit": "pauses"},
         "spin_time": {"value": 5, "unit": "millisecond"}}]}]}"#;
    let d = parse_dataset(text, "x").unwrap();
    let b = &d.benchmarks[0];
    let pauses = b.series("gc_pauses").unwrap();
    assert_eq!(pauses.unit, "pauses");
    assert_values(pauses, &[3.0]);
    let spin = b.series("spin_time").unwrap();
    assert_eq!(spin.unit, "s");
    assert_values(spin, &[0.005]);
}

// ----- hyperfine 1 ---------------------------------------------------------------

#[test]
fn hyperfine1_json() {
    let d = parse_dataset(HYPERFINE1, "hf1.json").unwrap();
    assert_eq!(d.format, "hyperfine-1");
    assert_eq!(d.benchmarks.len(), 2);
    let a = &d.benchmarks[0];
    assert_eq!(a.name, "sleep 0.1");
    assert_eq!(a.parameters, params(&[("size", "small"), ("delay", "0.1")]));
    assert_eq!(a.series.len(), 1, "user/system means are not samples");
    assert_values(
        a.series("time_wall_clock").unwrap(),
        &[
            0.10356543618,
            0.10237855418000001,
            0.10197225118,
            0.10228643218,
            0.10238915818,
        ],
    );
    let b = &d.benchmarks[1];
    assert_values(
        b.series("memory_peak_resident").unwrap(),
        &[1843200.0, 1847296.0, 1839104.0],
    );
    assert!(b.series("time_user").is_none());
}

// ----- Go ---------------------------------------------------------------

#[test]
fn go_bench_text() {
    let d = parse_dataset(GO, "old.txt").unwrap();
    assert_eq!(d.format, "go");
    let names: Vec<(&str, &[(String, String)])> = d
        .benchmarks
        .iter()
        .map(|b| (b.name.as_str(), b.parameters.as_slice()))
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    let small = &d.benchmarks[0];
    assert_eq!(small.name, "Parse/size=10", "prefix and -8 suffix stripped");
    assert_eq!(
        small.parameters,
        params(&[("size", "10"), ("gomaxprocs", "8")])
    );
    let secs = small.series("sec/op").unwrap();
    assert_eq!(secs.unit, "s");
    assert!(!secs.higher_is_better);
    assert_values(secs, &[1234e-9, 1250e-9, 1241e-9]);
    let bytes = small.series("B/op").unwrap();
    assert_eq!(bytes.unit, "B");
    assert_values(bytes, &[512.0, 512.0, 512.0]);
    let allocs = small.series("allocs/op").unwrap();
    assert_eq!(allocs.unit, "");
    assert_values(allocs, &[3.0, 3.0, 3.0]);
    let mbs = small.series("MB/s").unwrap();
    assert!(mbs.higher_is_better);
    assert_values(mbs, &[12.5, 12.34, 12.43]);

    let large = &d.benchmarks[1];
    assert_eq!(large.name, "Parse/size=1000");
    assert_eq!(large.series("sec/op").unwrap().values.len(), 3);

    let encode = &d.benchmarks[2];
    assert_eq!(encode.name, "Encode");
    assert_eq!(encode.parameters, params(&[("gomaxprocs", "8")]));
    let widgets = encode.series("widgets/op").unwrap();
    assert_eq!(widgets.unit, "widgets/op");
    assert!(!widgets.higher_is_better);
    assert_values(widgets, &[7.0, 7.0, 7.0]);
    assert_eq!(encode.series("sec/op").unwrap().values.len(), 3);
}

#[test]
fn go_packages_do_not_merge() {
    let d = parse_dataset(GO_TWO_PKGS, "x").unwrap();
    let names: Vec<&str> = d.benchmarks.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "example.com/a.Run",
            "example.com/b.Run",
            "example.com/b.OnlyB"
        ]
    );
    assert_values(
        d.benchmarks[0].series("sec/op").unwrap(),
        &[60000e-9, 61000e-9],
    );
    assert_values(
        d.benchmarks[1].series("sec/op").unwrap(),
        &[1200000e-9, 1190000e-9],
    );
    // No -N suffix (GOMAXPROCS=1): no gomaxprocs parameter.
    assert!(d.benchmarks[2].parameters.is_empty());
}

#[test]
fn go_unit_metadata_sets_direction() {
    let text = "BenchmarkX-2 10 5 score\nBenchmarkX-2 10 6 score\nUnit score better=higher\n";
    let d = parse_dataset(text, "x").unwrap();
    assert!(d.benchmarks[0].series("score").unwrap().higher_is_better);
}

#[test]
fn go_names_with_a_lower_case_letter_after_the_prefix_are_benchmarks() {
    // As benchfmt reads them (golang/perf's benchseries data has such names);
    // prose with the same prefix that does not parse as a result is ignored.
    let text = "\
pkg: example.com/x
Benchmarkfoo_total 1 1500 ns/op 10 B/op
Benchmarking the parser now
Benchmarkfoo_total 1 1600 ns/op 10 B/op
Benchmarked 3 times
BenchmarkBar-4 100 20 ns/op
Benchmarkfoo_total/size=2-8 1 7 ns/op
";
    let d = parse_dataset(text, "x").unwrap();
    let names: Vec<(&str, &[(String, String)])> = d
        .benchmarks
        .iter()
        .map(|b| (b.name.as_str(), b.parameters.as_slice()))
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert_eq!(d.benchmarks[0].name, "foo_total");
    assert!(d.benchmarks[0].parameters.is_empty());
    assert_values(
        d.benchmarks[0].series("sec/op").unwrap(),
        &[1500e-9, 1600e-9],
    );
    assert_values(d.benchmarks[0].series("B/op").unwrap(), &[10.0, 10.0]);
    assert_eq!(d.benchmarks[1].name, "Bar");
    assert_eq!(d.benchmarks[2].name, "foo_total/size=2");
    assert_eq!(
        d.benchmarks[2].parameters,
        params(&[("size", "2"), ("gomaxprocs", "8")])
    );
    // Only such names: still a dataset, not "no benchmark lines".
    let d = parse_dataset("Benchmarkfoo 5 1 ns/op\n", "x").unwrap();
    assert_eq!(d.benchmarks[0].name, "foo");
}

#[test]
fn go_unit_metadata_assume_exact() {
    let text = "\
BenchmarkX-2 10 5 ns/op 3 allocs/op 9 text-bytes
Unit text-bytes assume=exact
Unit allocs/op assume=nothing better=lower
";
    let d = parse_dataset(text, "x").unwrap();
    let x = &d.benchmarks[0];
    assert!(x.series("text-bytes").unwrap().exact);
    assert!(!x.series("allocs/op").unwrap().exact);
    assert!(!x.series("sec/op").unwrap().exact);
    // Metadata for a tidied unit reaches the tidied series.
    let d = parse_dataset("BenchmarkX 1 5 ns/op\nUnit ns/op assume=exact\n", "x").unwrap();
    assert!(d.benchmarks[0].series("sec/op").unwrap().exact);
}

#[test]
fn go_without_header_and_with_crlf() {
    let text =
        "BenchmarkFib20-8 \t 30000 \t 41653 ns/op\r\nBenchmarkFib20-8 \t 30000 \t 41000 ns/op\r\n";
    let d = parse_dataset(text, "x").unwrap();
    assert_eq!(d.benchmarks[0].name, "Fib20");
    assert_values(
        d.benchmarks[0].series("sec/op").unwrap(),
        &[41653e-9, 41000e-9],
    );
}

// ----- detection ---------------------------------------------------------------

#[test]
fn detection_is_by_content() {
    // JSON with leading whitespace and a BOM is still JSON.
    let bom = format!("\u{feff}\n  {}", HYPERFINE1);
    assert_eq!(parse_dataset(&bom, "a.txt").unwrap().format, "hyperfine-1");
    // Go text in a file named .json is Go.
    assert_eq!(parse_dataset(GO, "results.json").unwrap().format, "go");
}

// ----- malformed input ----------------------------------------------------------

#[test]
fn empty_input() {
    assert_eq!(err(""), "empty input: no benchmark results");
    assert_eq!(err(" \n\t\n"), "empty input: no benchmark results");
}

#[test]
fn invalid_json_names_line_and_column() {
    let msg = err("{\n  \"results\": [\n    {\"command\": \"x\",}\n  ]\n}");
    assert!(msg.starts_with("invalid JSON at line 3, column "), "{msg}");
    let msg = err("{\"results\": [");
    assert!(msg.starts_with("invalid JSON at line 1"), "{msg}");
    // NaN is not JSON.
    let msg = err(r#"{"results": [{"command": "x", "times": [NaN]}]}"#);
    assert!(msg.starts_with("invalid JSON at line 1"), "{msg}");
}

#[test]
fn json_of_unknown_shape() {
    assert_eq!(
        err("[1, 2, 3]"),
        "unrecognized JSON: top level is an array; expected an object with a `results` array \
         (cmdscope or hyperfine JSON)"
    );
    assert_eq!(
        err(r#"{"benchmarks": []}"#),
        "unrecognized JSON: no `results` array: this is neither cmdscope nor hyperfine JSON"
    );
    assert_eq!(
        err(r#"{"results": [{"command": "x", "foo": 1}]}"#),
        "unrecognized JSON: results[0] has neither `measurements` (cmdscope, hyperfine 2) \
         nor `times` (hyperfine 1)"
    );
    assert_eq!(
        err(r#"{"results": {"command": "x"}}"#),
        "results: expected an array, found an object"
    );
    assert_eq!(
        err(r#"{"results": []}"#),
        "results: empty array: no benchmarks"
    );
    assert_eq!(
        err(r#"{"results": [3]}"#),
        "results[0]: expected an object, found a number"
    );
    assert_eq!(
        err(r#"{"results": [{"command": "x", "mean": 0.1}]}"#),
        "results[0]: only summary statistics (`mean`, ...), no per-run `times` or \
         `measurements`: distributions cannot be compared"
    );
}

#[test]
fn non_numeric_values() {
    assert_eq!(
        err(r#"{"results": [{"command": "x", "times": [0.1, "0.2"]}]}"#),
        "results[0].times[1]: expected a number, found a string"
    );
    assert_eq!(
        err(r#"{"results": [{"command": "x", "times": 0.1}]}"#),
        "results[0].times: expected an array of numbers, found a number"
    );
    assert_eq!(
        err(
            r#"{"tool": "cmdscope", "results": [{"command": "x", "measurements": [
            {"time_wall_clock": {"value": 0.1, "unit": "s"}},
            {"time_wall_clock": {"value": "fast", "unit": "s"}}]}]}"#
        ),
        "line 3: results[0].measurements[1].time_wall_clock.value: expected a number, found a string"
    );
    assert_eq!(
        err(r#"{"results": [{"command": 42, "times": [0.1]}]}"#),
        "results[0].command: expected a string, found a number"
    );
    assert_eq!(
        err(r#"{"results": [{"times": [0.1]}]}"#),
        "results[0]: missing `command`"
    );
    assert_eq!(
        err(
            r#"{"results": [{"command": "x", "measurements": [{"time_wall_clock": {"value": 1, "unit": "parsec"}}]}]}"#
        ),
        "results[0].measurements[0].time_wall_clock.unit: unit 'parsec' does not fit \
         time_wall_clock (expected a time unit such as s or ms)"
    );
    assert_eq!(
        err(r#"{"results": [{"command": "x", "times": [0.1], "parameters": {"n": [1]}}]}"#),
        "results[0].parameters.n: expected a string or number, found an array"
    );
}

#[test]
fn negative_and_out_of_range_values() {
    assert_eq!(
        err(r#"{"results": [{"command": "x", "times": [0.1, -0.2]}]}"#),
        "results[0].times[1]: negative time -0.2"
    );
    assert_eq!(
        err(
            r#"{"results": [{"command": "x", "measurements": [{"time_wall_clock": {"value": -1, "unit": "s"}}]}]}"#
        ),
        "results[0].measurements[0].time_wall_clock.value: negative value -1"
    );
    assert_eq!(
        err(r#"{"results": [{"command": "x", "times": [0.1], "memory_usage_byte": [-5]}]}"#),
        "results[0].memory_usage_byte[0]: negative size -5"
    );
    // Out of f64 range is rejected by the JSON reader itself.
    let msg = err(r#"{"results": [{"command": "x", "times": [1e999]}]}"#);
    assert!(msg.starts_with("invalid JSON at line 1"), "{msg}");
}

#[test]
fn go_without_benchmark_lines() {
    let text = "goos: linux\ngoarch: amd64\npkg: example.com/x\nPASS\nok  \texample.com/x\t0.01s\n";
    assert_eq!(
        err(text),
        "`go test` output without benchmark result lines (was it run with -bench, \
         e.g. `go test -bench . -count 10`?)"
    );
    assert_eq!(
        err("hello world\nthis is not a results file\n"),
        "unrecognized format: not JSON, and no `go test -bench` result lines \
         (lines like `BenchmarkName-8  1000  1234 ns/op`)"
    );
    // Bare names (go test -v) alone are not results.
    assert_eq!(
        err("goos: linux\nBenchmarkX\nPASS\n"),
        "`go test` output without benchmark result lines (was it run with -bench, \
         e.g. `go test -bench . -count 10`?)"
    );
}

#[test]
fn go_malformed_lines() {
    let base = "goos: linux\nBenchmarkA-8 100 5 ns/op\n";
    let with = |line: &str| format!("{base}{line}\n");
    assert_eq!(
        err(&with("BenchmarkA-8 100 1234 ns/op 512")),
        "line 3: BenchmarkA-8: value '512' has no unit (values and units must come in pairs)"
    );
    assert_eq!(
        err(&with("BenchmarkA-8 100 1234 ns/op 512 3")),
        "line 3: BenchmarkA-8: expected a unit after value '512', found number '3'"
    );
    assert_eq!(
        err(&with("BenchmarkA-8 100 fast ns/op")),
        "line 3: BenchmarkA-8: 'fast' is not a number (value for unit 'ns/op')"
    );
    assert_eq!(
        err(&with("BenchmarkA-8 lots 5 ns/op")),
        "line 3: BenchmarkA-8: expected an iteration count after the name, found 'lots'"
    );
    assert_eq!(
        err(&with("BenchmarkA-8 100")),
        "line 3: BenchmarkA-8: no measurements after the iteration count"
    );
    assert_eq!(
        err(&with("BenchmarkA-8 100 NaN ns/op")),
        "line 3: BenchmarkA-8: ns/op value 'NaN' is not finite"
    );
    assert_eq!(
        err(&with("BenchmarkA-8 100 inf ns/op")),
        "line 3: BenchmarkA-8: ns/op value 'inf' is not finite"
    );
    assert_eq!(
        err(&with("BenchmarkA-8 100 -5 ns/op")),
        "line 3: BenchmarkA-8: negative ns/op value '-5'"
    );
    // Custom units may be negative.
    let d = parse_dataset(&with("BenchmarkA-8 100 -5 delta/op"), "x").unwrap();
    assert_values(d.benchmarks[0].series("delta/op").unwrap(), &[-5.0]);
}

#[test]
fn go_noise_is_ignored() {
    let text = "\
=== RUN   TestX
--- PASS: TestX (0.00s)
Benchmarking is fun
    bench_test.go:10: some log
BenchmarkA-8 100 5 ns/op
FAIL\texample.com/x [build failed]
";
    let d = parse_dataset(text, "x").unwrap();
    assert_eq!(d.benchmarks.len(), 1);
}

#[test]
fn read_dataset_maps_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let e = read_dataset(&missing).unwrap_err();
    assert!(matches!(e, Error::Read { .. }), "{e:?}");
    assert_eq!(e.exit_code(), crate::error::exit::USAGE);

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"results\": 1}").unwrap();
    let e = read_dataset(&bad).unwrap_err();
    assert!(matches!(e, Error::Parse { .. }), "{e:?}");
    assert_eq!(e.exit_code(), 2);
    assert_eq!(
        e.to_string(),
        format!(
            "{}: results: expected an array, found a number",
            bad.display()
        )
    );

    let binary = dir.path().join("bin");
    std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
    let e = read_dataset(&binary).unwrap_err();
    assert!(e.to_string().contains("not UTF-8"), "{e}");

    let good = dir.path().join("old.txt");
    std::fs::write(&good, GO).unwrap();
    let d = read_dataset(&good).unwrap();
    assert_eq!(d.source, good.display().to_string());
    assert_eq!(d.format, "go");
}

#[test]
fn cmdscope_exporter_edge_values() {
    // As the runner's exporter writes them: `name` null, a run killed by a
    // signal (exit_code null), a value that was not finite (null), extra
    // session and result fields.
    let text = r#"{
      "schema_version": 2, "tool": "cmdscope", "version": "0.1.0",
      "session": {"started": "2026-01-01T00:00:00Z", "seed": 7, "shell_overhead": null},
      "results": [{
        "command": "sleep 0.01", "name": null,
        "mean": 0.0105, "times": [0.0101, 0.011], "exit_codes": [0, null],
        "memory_usage_byte": [1024, 2048], "runs": 2, "timed_out_runs": 0,
        "measurements": [
          {"run_index": 0, "exit_code": 0, "timed_out": false,
           "time_wall_clock": {"value": 0.0101, "unit": "s"},
           "cpu_cycles": {"value": null, "unit": ""}},
          {"run_index": 1, "exit_code": null, "signal": 9, "timed_out": false,
           "time_wall_clock": {"value": 0.011, "unit": "s"},
           "cpu_cycles": {"value": 123456, "unit": ""}}
        ],
        "summary": {"time_wall_clock": {"median": 0.01055, "median_ci": null, "unit": "s", "outliers": []}},
        "warnings": ["only 2 runs"]
      }],
      "comparisons": []
    }"#;
    let d = parse_dataset(text, "run.json").unwrap();
    assert_eq!(d.format, "cmdscope");
    let b = &d.benchmarks[0];
    assert_eq!(b.name, "sleep 0.01");
    assert_values(b.series("time_wall_clock").unwrap(), &[0.0101, 0.011]);
    assert_values(b.series("cpu_cycles").unwrap(), &[123456.0]);
    assert!(
        b.series("memory_peak_resident").is_none(),
        "flat fields are not read"
    );
}

#[test]
fn killed_runs_and_removed_outliers_are_not_samples() {
    let text = r#"{"results": [{"command": "x", "measurements": [
        {"run_index": 0, "exit_code": 0, "timed_out": false,
         "time_wall_clock": {"value": 0.1, "unit": "s"}},
        {"run_index": 1, "exit_code": null, "timed_out": true,
         "time_wall_clock": {"value": 5.0, "unit": "s"}},
        {"run_index": 2, "exit_code": 0, "outlier_removed": true,
         "time_wall_clock": {"value": 9.0, "unit": "s"}},
        {"run_index": 3, "exit_code": 0,
         "time_wall_clock": {"value": 0.2, "unit": "s"}}
    ]}]}"#;
    let d = parse_dataset(text, "run.json").unwrap();
    assert_values(
        d.benchmarks[0].series("time_wall_clock").unwrap(),
        &[0.1, 0.2],
    );
}

#[test]
fn values_that_overflow_in_conversion_are_errors() {
    let text = r#"{"results": [{"command": "x", "measurements": [
        {"memory_peak_resident": {"value": 1e308, "unit": "GiB"}}
    ]}]}"#;
    let e = err(text);
    assert!(
        e.starts_with("line 2: results[0].measurements[0].memory_peak_resident.value:")
            && e.contains("too large"),
        "{e}"
    );
}

#[test]
fn field_errors_name_their_line() {
    let text = "{\"results\": [\n  {\"command\": \"a \\\" } ] {\", \"x\": {\"k\": [1, {\"y\": 2}]},\n   \"times\": [0.1,\n 0.2,\n -3]}\n]}";
    let e = err(text);
    assert!(e.starts_with("line 5: results[0].times[2]:"), "{e}");
    assert_eq!(super::json_line(text, "results[0].x.k[1].y"), Some(2));
    assert_eq!(super::json_line(text, "results[0].nope"), None);
    assert_eq!(super::json_line(text, "results[3]"), None);
}

#[test]
fn run_flags_of_another_type_are_errors() {
    // Read as false, `"yes"` would count a killed run as a sample.
    for (flag, value, kind) in [
        ("timed_out", "\"yes\"", "a string"),
        ("timed_out", "1", "a number"),
        ("outlier_removed", "\"true\"", "a string"),
    ] {
        let text = format!(
            r#"{{"results": [{{"command": "x", "measurements": [
            {{"{flag}": {value}, "time_wall_clock": {{"value": 0.1, "unit": "s"}}}}
        ]}}]}}"#
        );
        let e = err(&text);
        assert!(
            e.starts_with(&format!("line 2: results[0].measurements[0].{flag}:"))
                && e.contains(&format!("expected true or false, found {kind}")),
            "{e}"
        );
    }
    // Absent and null are not flags set.
    let text = r#"{"results": [{"command": "x", "measurements": [
        {"timed_out": null, "time_wall_clock": {"value": 0.1, "unit": "s"}}
    ]}]}"#;
    let d = parse_dataset(text, "run.json").unwrap();
    assert_values(d.benchmarks[0].series("time_wall_clock").unwrap(), &[0.1]);
}

#[test]
fn duplicate_benchmarks_are_refused_not_dropped() {
    // The same name twice: whichever were kept, the other would go unjudged.
    let text = r#"{"results": [
      {"command": "x", "times": [0.1, 0.1]},
      {"command": "x", "times": [9.0, 9.0]}
    ]}"#;
    let e = err(text);
    assert!(
        e.starts_with("line 3: results[1]: benchmark 'x' appears again (first as results[0])"),
        "{e}"
    );
    // Same parameters in another order are the same benchmark; other
    // values are another one.
    let text = r#"{"results": [
      {"command": "x", "parameters": {"a": "1", "b": "2"}, "times": [0.1]},
      {"command": "x", "parameters": {"b": "2", "a": "1"}, "times": [0.2]}
    ]}"#;
    assert!(err(text).contains("with the same parameters"));
    let text = r#"{"results": [
      {"command": "x", "parameters": {"a": "1"}, "times": [0.1]},
      {"command": "x", "parameters": {"a": "2"}, "times": [0.2]}
    ]}"#;
    assert_eq!(parse_dataset(text, "p.json").unwrap().benchmarks.len(), 2);
}
