//! Outliers by a robust rule: the modified z-score on the median and MAD,
//! the mean absolute deviation where the MAD is 0. Pure: no I/O, no clock.

use super::descriptive::median_select;

/// Indices (ascending) of outliers by a robust rule.
///
/// Iglewicz & Hoaglin's modified z-score ([`modified_z_scores`]) over 3.5.
/// Median and MAD are not dragged by the outliers themselves, unlike mean
/// and standard deviation (which a single wild run inflates enough to hide
/// itself). NaN and infinite values are always reported.
pub fn outliers(xs: &[f64]) -> Vec<usize> {
    modified_z_scores(xs, ZeroMad::MeanDeviation)
        .iter()
        .zip(xs)
        .enumerate()
        .filter(|&(_, (z, x))| !x.is_finite() || z.abs() > 3.5)
        .map(|(i, _)| i)
        .collect()
}

/// What the modified z-score divides by when the MAD is 0 (at least half
/// the values identical, common with coarse timers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeroMad {
    /// The mean absolute deviation, 1.253314 MeanAD, the standard fallback
    /// (1.253314 = sqrt(pi/2) makes it consistent for the normal); if that
    /// is 0 too, all values are equal and every score is 0.
    MeanDeviation,
    /// The smallest positive f64 step (`f64::EPSILON`) in place of the
    /// MAD, as hyperfine does: any value off the median scores as far.
    Epsilon,
}

/// Each value's modified z-score, (x - median) / (1.4826 MAD), signed
/// (above the median is positive); `zero_mad` says what stands for a MAD
/// of 0. Non-finite values score NaN and are left out of the median and
/// MAD.
pub fn modified_z_scores(xs: &[f64], zero_mad: ZeroMad) -> Vec<f64> {
    let mut finite: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if finite.is_empty() {
        return vec![f64::NAN; xs.len()];
    }
    let median = median_select(&mut finite);
    let mut dev: Vec<f64> = finite.iter().map(|x| (x - median).abs()).collect();
    let mean_ad = dev.iter().sum::<f64>() / dev.len() as f64;
    let mad = median_select(&mut dev);
    let scale = match zero_mad {
        _ if mad > 0.0 => 1.4826 * mad,
        ZeroMad::MeanDeviation => 1.253314 * mean_ad,
        ZeroMad::Epsilon => 1.4826 * f64::EPSILON,
    };
    xs.iter()
        .map(|&x| match x.is_finite() {
            false => f64::NAN,
            true if scale > 0.0 => (x - median) / scale,
            true => 0.0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! Reference values come from R, published tables, exact arithmetic and
    //! brute-force enumeration (sources: `stats::tests`); simulations are seeded.

    use super::*;

    #[test]
    fn outliers_use_the_modified_z_score() {
        // median 10, |x - 10| = 0,1,1,2,2,3,3,15,60 -> MAD 2, scale 2.9652:
        // 25 scores 5.06 (out), 70 scores 20.2 (out), 13 scores 1.01 (in).
        let xs = [10.0, 11.0, 9.0, 12.0, 8.0, 13.0, 7.0, 25.0, 70.0];
        assert_eq!(outliers(&xs), vec![7, 8]);
        // 20 has |20 - 10| / 2.9652 = 3.37 < 3.5: kept.
        let ys = [10.0, 11.0, 9.0, 12.0, 8.0, 13.0, 7.0, 20.0];
        assert!(outliers(&ys).is_empty());
    }

    #[test]
    fn outliers_fall_back_to_mean_absolute_deviation_when_mad_is_zero() {
        // MAD = 0; MeanAD = 99/5 = 19.8, score 99 / (1.253314 * 19.8) = 3.99.
        assert_eq!(outliers(&[1.0, 1.0, 1.0, 1.0, 100.0]), vec![4]);
        // With 4 values the same outlier scores 3.19: too little evidence.
        assert!(outliers(&[1.0, 1.0, 1.0, 100.0]).is_empty());
        assert!(outliers(&[2.0; 9]).is_empty());
        assert!(outliers(&[]).is_empty());
        assert!(outliers(&[1.0]).is_empty());
        assert_eq!(outliers(&[1.0, f64::NAN, 1.0, f64::INFINITY]), vec![1, 3]);
        assert_eq!(outliers(&[f64::NAN]), vec![0]);
    }

    #[test]
    fn scores_are_signed_and_hyperfines_zero_mad_makes_any_deviation_far() {
        // median 11, MAD 2 (scale 2.9652): 25 scores +4.72, 7 scores -1.35.
        let xs = [10.0, 11.0, 9.0, 12.0, 8.0, 13.0, 7.0, 25.0, 70.0];
        let z = modified_z_scores(&xs, ZeroMad::MeanDeviation);
        assert!(
            (z[7] - 14.0 / 2.9652).abs() < 1e-3 && (z[6] + 4.0 / 2.9652).abs() < 1e-3,
            "{z:?}"
        );
        // MAD 0: the mean deviation (99/5 = 19.8) scores 100 at 3.99; hyperfine's
        // epsilon scores it beyond any threshold, and the equal values at 0.
        let xs = [1.0, 1.0, 1.0, 1.0, 100.0];
        let z = modified_z_scores(&xs, ZeroMad::MeanDeviation);
        assert!((z[4] - 99.0 / (1.253314 * 19.8)).abs() < 1e-6, "{z:?}");
        let z = modified_z_scores(&xs, ZeroMad::Epsilon);
        assert!(z[4] > 1e15 && z[..4] == [0.0; 4], "{z:?}");
    }
}
