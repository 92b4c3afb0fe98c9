//! The analysis itself: the test chosen by size and level, its estimate,
//! interval and p-value on the comparison's scale, and the verdict decided
//! from them so that the three agree.

use crate::analysis::modes::concordant_blocks;
use crate::stats;
use crate::stats::ttest;

use super::advice::more_runs_advice;
use super::{
    Caveat, Comparison, Design, Interval, Lack, Note, Per, Scale, SessionVariation, Settings, Test,
    Verdict, MIN_N, RANK_RESOLUTION_FACTOR,
};

/// Smallest two-sided p-value the rank test of this design can give with
/// these sizes (no ties): 2 / 2^n paired, 2 / C(n_a + n_b, n_a) unpaired.
pub fn rank_test_resolution(design: Design, n_a: usize, n_b: usize) -> f64 {
    match design {
        Design::Paired => 2.0 * 0.5f64.powi(n_a.min(n_b).min(2000) as i32),
        Design::Unpaired => {
            let (k, n) = (n_a.min(n_b), n_a + n_b);
            // ln C(n, k) by a sum of logs: small k and n are all this needs
            // to be accurate, and large ones only need "tiny".
            let ln_c: f64 = (0..k)
                .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
                .sum();
            (2.0 * (-ln_c).exp()).min(1.0)
        }
    }
}

/// Fewest values per side (pairs when paired) from which a discrete
/// metric's exact rank test can reach `level`: 6 pairs at 0.05.
pub fn discrete_runs_needed(design: Design, level: f64) -> usize {
    (MIN_N..4096)
        .find(|&k| rank_test_resolution(design, k, k) <= level)
        .unwrap_or(4096)
}

/// The test used for these sizes at this per-comparison level: by n and
/// level only, never by the data.
pub fn select_test(design: Design, n_a: usize, n_b: usize, level: f64) -> Test {
    let rank_ok = rank_test_resolution(design, n_a, n_b) <= level / RANK_RESOLUTION_FACTOR;
    match (design, rank_ok) {
        (Design::Paired, true) => Test::SignedRank,
        (Design::Paired, false) => Test::PairedT,
        (Design::Unpaired, true) => Test::MannWhitney,
        (Design::Unpaired, false) => Test::WelchT,
    }
}

/// One estimate with its interval and the test's p-value, on one scale.
struct Fit {
    estimate: f64,
    ci: [f64; 2],
    p: f64,
    exact: bool,
}

fn fit(
    test: Test,
    a: &[f64],
    b: &[f64],
    d: &[f64],
    confidence: f64,
    intervals: bool,
) -> Option<Fit> {
    match test {
        Test::SignedRank => {
            let t = stats::wilcoxon_signed_rank(d).ok()?;
            if !intervals {
                return Some(Fit::p_only(t.p_value, t.exact));
            }
            let e = stats::hodges_lehmann_paired(d, confidence).ok()?;
            Some(Fit {
                estimate: e.value,
                ci: [e.low, e.high],
                p: t.p_value,
                exact: t.exact,
            })
        }
        Test::MannWhitney => {
            let t = stats::mann_whitney(a, b).ok()?;
            if !intervals {
                return Some(Fit::p_only(t.p_value, t.exact));
            }
            let e = stats::hodges_lehmann_shift(a, b, confidence).ok()?;
            Some(Fit {
                estimate: e.value,
                ci: [e.low, e.high],
                p: t.p_value,
                exact: t.exact,
            })
        }
        Test::PairedT => {
            let t = ttest::paired_t(d, confidence).ok()?;
            // No spread at all: all n differences equal. The t statistic is
            // infinite, but sign flips of equal values can only prove as
            // much as their resolution, 2 / 2^n.
            Some(Fit::t(t, || {
                rank_test_resolution(Design::Paired, d.len(), d.len())
            }))
        }
        Test::WelchT => {
            let t = ttest::welch_t(a, b, confidence).ok()?;
            // Two constant samples: complete separation is all a
            // permutation argument can show.
            Some(Fit::t(t, || {
                rank_test_resolution(Design::Unpaired, a.len(), b.len())
            }))
        }
    }
}

impl Fit {
    /// A t-test's fit; without any spread (a zero standard error and a
    /// nonzero estimate) its p-value is the `resolution` of the matching
    /// rank test instead of what the infinite t statistic gives.
    fn t(t: ttest::TTest, resolution: impl FnOnce() -> f64) -> Fit {
        let p = if t.se == 0.0 && t.estimate != 0.0 {
            resolution()
        } else {
            t.p_value
        };
        Fit {
            estimate: t.estimate,
            ci: [t.low, t.high],
            p,
            exact: false,
        }
    }

    fn p_only(p: f64, exact: bool) -> Fit {
        Fit {
            estimate: f64::NAN,
            ci: [f64::NAN; 2],
            p,
            exact,
        }
    }
}

fn median(xs: &[f64]) -> f64 {
    stats::median(xs).unwrap_or(f64::NAN)
}

/// Compares `cand` with `base` (one metric, no names: see `Comparison::named`).
/// Always returns a comparison; where no verdict is possible it is
/// `Inconclusive` or `NotComparable` with a note.
pub fn compare_values(base: &[f64], cand: &[f64], design: Design, s: &Settings) -> Comparison {
    analyse(base, cand, design, s, Depth::Full)
}

/// How much of an analysis to compute.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// The test's p-value only.
    PValue,
    /// The verdict: test, ratio interval and note, without the shift in the
    /// metric's unit (what sequential looks need).
    Verdict,
    Full,
}

/// The verdict of `compare_values` without the shift in the metric's
/// unit (`shift` and `shift_ci` are NaN): for the sequential looks, which
/// run it many times.
pub fn verdict_only(base: &[f64], cand: &[f64], design: Design, s: &Settings) -> Comparison {
    analyse(base, cand, design, s, Depth::Verdict)
}

/// The p-value of the test `compare_values` would use, without its
/// intervals (NaN where it gives none). For simulations that only need to
/// know whether a comparison could have been significant: p < level is
/// necessary for a faster/slower verdict.
pub fn p_value(base: &[f64], cand: &[f64], design: Design, s: &Settings) -> f64 {
    analyse(base, cand, design, s, Depth::PValue).p_value
}

fn analyse(base: &[f64], cand: &[f64], design: Design, s: &Settings, depth: Depth) -> Comparison {
    let intervals = depth != Depth::PValue;
    let family = s.family.max(1);
    let level = s.level();
    let confidence = 1.0 - level;
    let paired = design == Design::Paired;
    let (mut a, mut b): (&[f64], &[f64]) = if paired {
        let n = base.len().min(cand.len());
        (&base[..n], &cand[..n])
    } else {
        (base, cand)
    };
    let positive = a.iter().chain(b).all(|&v| v > 0.0 && v.is_finite());
    // Two speeds in the pooled runs: only blocks whose runs share a mode
    // are compared (exact under the paired null, see `analysis::modes`).
    let within = (paired && positive && !s.discrete && s.speed_modes)
        .then(|| concordant_blocks(a, b))
        .flatten()
        .filter(|(_, ka, _)| ka.len() >= MIN_N);
    if let Some((_, ka, kb)) = &within {
        (a, b) = (ka, kb);
    }
    let speed_modes = within.as_ref().map(|(m, _, _)| *m);
    let n = a.len().min(b.len());
    let scale = if positive {
        Scale::LogRatio
    } else {
        Scale::Difference
    };
    let test = if s.discrete {
        match design {
            Design::Paired => Test::SignedRank,
            Design::Unpaired => Test::MannWhitney,
        }
    } else {
        select_test(design, a.len(), b.len(), level)
    };
    let mut c = Comparison {
        metric: "",
        baseline: String::new(),
        candidate: String::new(),
        verdict: Verdict::Inconclusive,
        note: None,
        ratio: f64::NAN,
        ratio_ci: [f64::NAN; 2],
        shift: f64::NAN,
        shift_ci: [f64::NAN; 2],
        p_value: f64::NAN,
        level,
        confidence,
        family,
        precision: s.precision,
        test,
        scale,
        exact: false,
        n,
        paired,
        counted: s.counted,
        session_variation: if s.cross_session {
            SessionVariation::NotIncluded
        } else {
            SessionVariation::SameSession
        },
        significant: false,
        speed_modes,
        lack: None,
    };
    if let Some(floor) = s.floor {
        if !a.is_empty() && !b.is_empty() && a.iter().chain(b).all(|&v| v <= floor) {
            c.verdict = Verdict::NotComparable;
            c.note = Some(Note::one(Caveat::AtFloor));
            return c;
        }
    }
    let per = Per {
        paired,
        counted: s.counted,
    };
    if s.exact_counts && n >= 2 {
        if let (Some(va), Some(vb)) = (constant(a), constant(b)) {
            if s.counts_vary && va != vb {
                repeated_counts(&mut c, va, vb, intervals, per);
            } else {
                identical_counts(&mut c, va, vb, intervals, per);
            }
            return c;
        }
    }
    if n < MIN_N {
        c.note = Some(Note::one(Caveat::TooFew {
            need: MIN_N,
            have: n,
            per,
            discrete_at: None,
        }));
        c.lack = Some(Lack::Values {
            need: MIN_N,
            have: n,
        });
        // Still say how the two compare, as hyperfine does: the ratio of
        // the medians, without an interval or a test.
        let (ma, mb) = (median(a), median(b));
        if ma > 0.0 && mb >= 0.0 {
            c.ratio = mb / ma;
        }
        return c;
    }
    if !(level > 0.0 && level < 1.0) {
        c.note = Some(Note::one(Caveat::NoLevel { level }));
        return c;
    }
    if s.discrete && rank_test_resolution(design, a.len(), b.len()) > level {
        let need = discrete_runs_needed(design, level);
        c.note = Some(Note::one(Caveat::TooFew {
            need,
            have: n,
            per,
            discrete_at: Some(level),
        }));
        c.lack = Some(Lack::Values { need, have: n });
        return c;
    }
    if a.iter().chain(b).any(|v| !v.is_finite()) {
        c.note = Some(Note::one(Caveat::NotFinite));
        c.lack = Some(Lack::NotFinite);
        return c;
    }
    let raw_d: Vec<f64> = if paired {
        a.iter().zip(b).map(|(x, y)| y - x).collect()
    } else {
        Vec::new()
    };
    // Shift in the metric's unit, by the same test family.
    if let Some(f) = (depth == Depth::Full)
        .then(|| fit(test, a, b, &raw_d, confidence, true))
        .flatten()
    {
        c.shift = f.estimate;
        c.shift_ci = f.ci;
    }
    let main = if positive {
        let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
        let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
        let ld: Vec<f64> = if paired {
            la.iter().zip(&lb).map(|(x, y)| y - x).collect()
        } else {
            Vec::new()
        };
        fit(test, &la, &lb, &ld, confidence, intervals).map(|f| {
            let r = [f.estimate.exp(), f.ci[0].exp(), f.ci[1].exp()];
            (f, r)
        })
    } else {
        let m = median(a);
        fit(test, a, b, &raw_d, confidence, intervals).map(|f| {
            // From a baseline median of 0 any increase is infinitely
            // large (so a slowdown from 0 fails a gate), no change is 1.
            let rel = |x: f64| {
                if m > 0.0 {
                    1.0 + x / m
                } else if m == 0.0 && x >= 0.0 {
                    if x > 0.0 {
                        f64::INFINITY
                    } else {
                        1.0
                    }
                } else if m == 0.0 {
                    0.0
                } else {
                    f64::NAN
                }
            };
            let r = [rel(f.estimate), rel(f.ci[0]), rel(f.ci[1])];
            (f, r)
        })
    };
    let Some((f, r)) = main else {
        c.note = Some(Note::one(Caveat::NotComputable { test }));
        return c;
    };
    c.p_value = f.p;
    c.exact = f.exact;
    c.ratio = r[0];
    c.ratio_ci = [r[1], r[2]];
    if !intervals {
        return c;
    }
    let (est, ci) = (f.estimate, f.ci);
    decide(&mut c, est, ci);
    c
}

/// Every value of `v`, when they are all one.
pub fn constant(v: &[f64]) -> Option<f64> {
    let first = *v.first()?;
    v.iter().all(|&x| x == first).then_some(first)
}

/// The change of exact values, from each side's one value: known, so its
/// interval has no width.
pub fn set_exact_change(c: &mut Comparison, base: f64, cand: f64) {
    c.exact = true;
    c.ratio = if base > 0.0 { cand / base } else { f64::NAN };
    c.ratio_ci = [c.ratio; 2];
    c.shift = cand - base;
    c.shift_ci = [c.shift; 2];
}

/// Exact counts that repeated in every run of each side: the change is
/// decided as any other, by the precision band, with no test to run (the
/// p-value is "n/a").
fn identical_counts(c: &mut Comparison, base: f64, cand: f64, intervals: bool, per: Per) {
    // Certain: significant unless there is no change at all.
    let p = if base == cand { 1.0 } else { 0.0 };
    let said = Caveat::IdenticalCounts { n: c.n, per };
    decide_exact(c, base, cand, intervals, p, said);
}

/// An exact change decided by the precision band: `p` is the p-value the
/// decision reads (and the one kept without `intervals`); once decided the
/// p-value is "n/a" and `said` opens the note, saying why the change is
/// known.
fn decide_exact(c: &mut Comparison, base: f64, cand: f64, intervals: bool, p: f64, said: Caveat) {
    set_exact_change(c, base, cand);
    c.p_value = p;
    if !intervals {
        return;
    }
    let estimate = if base > 0.0 && cand > 0.0 {
        (cand / base).ln()
    } else {
        cand - base
    };
    decide(c, estimate, [estimate; 2]);
    c.p_value = f64::NAN;
    let mut note = c.note.take().unwrap_or_default();
    note.0.insert(0, said);
    c.note = Some(note);
}

/// The largest chance that a count repeats in all `n` runs of each side
/// and differs between the sides when the two sides do not differ: every
/// run's count drawn independently from one distribution, whatever it is.
/// It is the sum over pairs of values v != w of (p_v p_w)^n, at most
/// 2 / 4^n, reached by two equally likely values. For n = 2 the sum is
/// s^2 - sum p^4 with s = sum p^2: at most s^2 (1 - s) (sum p^4 >= s^3)
/// <= 1/8 while s <= 1/2, at most (1 - s)^2 / 2 <= 1/8 beyond; each
/// further run multiplies a term by p_v p_w <= 1/4.
pub fn repeated_by_chance(n: usize) -> f64 {
    2.0 * 0.25f64.powi(n.min(1000) as i32)
}

/// Fewest runs per side whose repetition is evidence at `level`
/// (`repeated_by_chance` within it): 3 at 0.05, 6 at 0.05 / 30.
pub fn runs_to_trust_repeats(level: f64) -> usize {
    (2..1000)
        .find(|&n| repeated_by_chance(n) <= level)
        .unwrap_or(1000)
}

/// Counts that repeated in every run of each side and differ, in a
/// program whose counts vary (`Settings::counts_vary`): the repetition is
/// the test, its p-value the chance of such a repetition without a
/// difference (`repeated_by_chance`). Within the level the change is
/// exact and decided as `identical_counts` decides it (the chance said in
/// the note, no p-value); otherwise there is no verdict, the p-value is
/// the chance, and the note says how many runs would give one.
fn repeated_counts(c: &mut Comparison, base: f64, cand: f64, intervals: bool, per: Per) {
    let chance = repeated_by_chance(c.n);
    c.p_value = chance;
    if chance > c.level {
        let need = runs_to_trust_repeats(c.level);
        c.note = Some(Note::one(Caveat::RepeatedCounts {
            n: c.n,
            per,
            chance,
            need: Some(need),
        }));
        c.lack = Some(Lack::Values { need, have: c.n });
        return;
    }
    // The chance is in the note; no p-value marks the change as exact.
    let said = Caveat::RepeatedCounts {
        n: c.n,
        per,
        chance,
        need: None,
    };
    decide_exact(c, base, cand, intervals, chance, said);
}

/// Sets the verdict from the p-value and the interval (on the test's scale,
/// where 0 is "no change"), keeping the two in agreement.
pub(super) fn decide(c: &mut Comparison, estimate: f64, ci: [f64; 2]) {
    let significant = c.p_value < c.level;
    let excludes = ci[0] > 0.0 || ci[1] < 0.0;
    let within = c.ratio_ci[0] >= 1.0 - c.precision && c.ratio_ci[1] <= 1.0 + c.precision;
    let identical = ci == [0.0, 0.0] && estimate == 0.0;
    // A ratio needs a positive baseline; otherwise speak of the change.
    let of_change = !c.ratio_ci.iter().all(|v| v.is_finite());
    let interval = Interval {
        confidence: c.confidence,
        bounds: if of_change { ci } else { c.ratio_ci },
        of_change,
    };
    c.verdict = match (significant, excludes) {
        // The whole interval within ±precision: whatever the test says,
        // no difference the user asked to see (`--precision` says what
        // counts). A significant sliver (1.00004 on a 1 s command) is named
        // with its size rather than called "slower".
        (true, true) if within => {
            c.note = Some(Note::one(Caveat::BelowPrecision {
                level: c.level,
                precision: c.precision,
            }));
            Verdict::NoDifference
        }
        (true, true) if estimate < 0.0 => Verdict::Faster,
        (true, true) => Verdict::Slower,
        (false, false) | (true, false) if within || identical => Verdict::NoDifference,
        (false, false) => {
            c.note = Some(Note::one(Caveat::TooWide {
                interval,
                precision: c.precision,
                advice: more_runs_advice(c),
            }));
            Verdict::Inconclusive
        }
        (false, true) => {
            c.note = Some(Note::one(Caveat::NotReached {
                interval,
                level: c.level,
                advice: more_runs_advice(c),
            }));
            Verdict::Inconclusive
        }
        (true, false) => {
            c.note = Some(Note::one(Caveat::RankDiscreteness {
                interval,
                n: c.n,
                unit: if c.paired { "pairs" } else { c.counted },
            }));
            Verdict::Inconclusive
        }
    };
    c.significant = c.verdict.is_significant();
    if c.session_variation == SessionVariation::NotIncluded {
        let mut note = c.note.take().unwrap_or_default();
        note.0.push(Caveat::SessionVariationLeftOut);
        c.note = Some(note);
    }
}
