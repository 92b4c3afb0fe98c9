//! What sampling costs the profiled command: the same command run plain,
//! sampled with frame pointers, and sampled with DWARF stacks, in
//! interleaved shuffled blocks through the same launcher
//! (`profile::sampler`), compared by the engine (paired, wall and CPU).
//!
//! cargo run --release --example profile_cost -- [--blocks N] [--frequency HZ] PROGRAM [ARG...]
//!
//! With `--jit-cost`, what `--jit-symbols` costs instead: the command run
//! unsampled with and without the options it gives the runtimes
//! (`profile::jit::with_runtime_options`), compared the same way.
//!
//! scripts/profile-cost builds the C fixture both ways and runs this.

use cmdscope::analysis::comparison::{self, Design};
use cmdscope::profile::sampler::{self, Launch, Setup};
use rand::seq::SliceRandom;
use rand::SeedableRng;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut blocks = 20;
    let mut frequency = cmdscope::profile::DEFAULT_FREQUENCY;
    let mut jit_cost = false;
    while args.len() > 1 && args[0].starts_with("--") {
        if args[0] == "--jit-cost" {
            jit_cost = true;
            args.remove(0);
            continue;
        }
        let v = args.remove(1);
        match args.remove(0).as_str() {
            "--blocks" => blocks = v.parse().expect("--blocks N"),
            "--frequency" => frequency = v.parse().expect("--frequency HZ"),
            other => panic!("unknown option {other}"),
        }
    }
    assert!(
        !args.is_empty(),
        "usage: profile_cost [--blocks N] PROGRAM [ARG...]"
    );
    let launch = Launch {
        command: cmdscope::exec::HeldCommand {
            program: cmdscope::exec::resolve_program(args[0].as_bytes()).expect("program"),
            argv: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
            envp: std::env::vars()
                .map(|(k, v)| std::ffi::CString::new(format!("{k}={v}")).unwrap())
                .collect(),
            ..Default::default()
        },
        timeout: None,
    };
    if jit_cost {
        return jit_options_cost(&launch, blocks, &args);
    }
    let fp = Setup::probe(frequency, false, false).expect("sampling allowed");
    let dwarf = Setup::probe(frequency, false, true).expect("sampling allowed");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    // wall, cpu per variant: 0 plain, 1 fp, 2 dwarf.
    let mut wall = vec![Vec::new(); 3];
    let mut cpu = vec![Vec::new(); 3];
    let mut samples = [0usize; 3];
    for _ in 0..blocks {
        let mut order = [0usize, 1, 2];
        order.shuffle(&mut rng);
        for v in order {
            let since = std::time::SystemTime::now();
            let r = match v {
                0 => sampler::plain_run(&launch),
                1 => sampler::sample_run(&fp, &launch),
                _ => sampler::sample_run(&dwarf, &launch),
            }
            .expect("run");
            // Maps a runtime wrote because its options were in the
            // environment (scripts/profile-cost sets them for Python).
            cmdscope::profile::jit::remove_written([r.pid].into_iter(), &[], since);
            assert_eq!(r.exit_code, Some(0), "the command failed");
            wall[v].push(r.wall);
            cpu[v].push(r.cpu);
            samples[v] += r.samples.len();
        }
    }
    let median = |xs: &[f64]| cmdscope::stats::median(xs).unwrap();
    println!(
        "{} blocks of {}, {} Hz; medians: plain {} wall / {} CPU",
        blocks,
        args.join(" "),
        frequency,
        cmdscope::units::time(median(&wall[0])),
        cmdscope::units::time(median(&cpu[0])),
    );
    let settings = comparison::Settings {
        family: 2,
        ..comparison::Settings::new(0.05, comparison::DEFAULT_PRECISION)
    };
    for (v, name) in [(1, "frame pointers"), (2, "DWARF stacks")] {
        for (what, xs) in [("wall", &wall), ("CPU", &cpu)] {
            let c = comparison::compare_values(&xs[0], &xs[v], Design::Paired, &settings);
            println!(
                "{name:>15} {what:>4}: {:+.1} % ({:+.1} % to {:+.1} %, {}), {} samples per run",
                100.0 * (c.ratio - 1.0),
                100.0 * (c.ratio_ci[0] - 1.0),
                100.0 * (c.ratio_ci[1] - 1.0),
                c.verdict.words(),
                samples[v] / blocks
            );
        }
    }
}

/// The command unsampled, without and with the runtimes' options, in
/// interleaved shuffled blocks, compared by the engine.
fn jit_options_cost(launch: &Launch, blocks: usize, args: &[String]) {
    let with = Launch {
        command: cmdscope::exec::HeldCommand {
            envp: cmdscope::profile::jit::with_runtime_options(launch.command.envp.clone()),
            ..launch.command.clone()
        },
        timeout: None,
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
    let mut wall = vec![Vec::new(); 2];
    let mut cpu = vec![Vec::new(); 2];
    for _ in 0..blocks {
        let mut order = [0usize, 1];
        order.shuffle(&mut rng);
        for v in order {
            let since = std::time::SystemTime::now();
            let r = sampler::plain_run(if v == 0 { launch } else { &with }).expect("run");
            // The maps the runtime wrote at the options' request.
            cmdscope::profile::jit::remove_written([r.pid].into_iter(), &[], since);
            assert_eq!(r.exit_code, Some(0), "the command failed");
            wall[v].push(r.wall);
            cpu[v].push(r.cpu);
        }
    }
    let median = |xs: &[f64]| cmdscope::stats::median(xs).unwrap();
    println!(
        "{} blocks of {}; medians without the options: {} wall / {} CPU",
        blocks,
        args.join(" "),
        cmdscope::units::time(median(&wall[0])),
        cmdscope::units::time(median(&cpu[0])),
    );
    let settings = comparison::Settings {
        family: 2,
        ..comparison::Settings::new(0.05, comparison::DEFAULT_PRECISION)
    };
    for (what, xs) in [("wall", &wall), ("CPU", &cpu)] {
        let c = comparison::compare_values(&xs[0], &xs[1], Design::Paired, &settings);
        println!(
            "   --jit-symbols {what:>4}: {:+.1} % ({:+.1} % to {:+.1} %, {})",
            100.0 * (c.ratio - 1.0),
            100.0 * (c.ratio_ci[0] - 1.0),
            100.0 * (c.ratio_ci[1] - 1.0),
            c.verdict.words(),
        );
    }
}
