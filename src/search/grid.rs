//! The grid's geometry: a grid index and its per-parameter positions
//! (the first parameter varies fastest, as the plan orders cells), the
//! neighbours of a value, the coarse scan's evenly spaced values, and a
//! value in words.

use crate::run::plan::Parameter;

/// Grid index of a point given per-parameter positions (the first
/// parameter varies fastest, as `plan::combinations` orders the cells,
/// hyperfine's order).
pub(super) fn grid_index(dims: &[usize], at: &[usize]) -> usize {
    dims.iter()
        .zip(at)
        .rev()
        .fold(0, |acc, (&d, &a)| acc * d + a)
}

/// Per-parameter positions of a grid index (inverse of `grid_index`).
pub(super) fn positions(dims: &[usize], mut g: usize) -> Vec<usize> {
    let mut at = vec![0; dims.len()];
    for k in 0..dims.len() {
        let d = dims[k].max(1);
        at[k] = g % d;
        g /= d;
    }
    at
}

/// The grid neighbours of `g`: every parameter at -1, 0 or +1 of its
/// position, not all 0 (diagonals included: a tilted valley runs along
/// them).
pub(super) fn around(dims: &[usize], g: usize) -> Vec<usize> {
    let at = positions(dims, g);
    let mut out = Vec::new();
    for code in 0..3usize.pow(dims.len() as u32) {
        let mut p = at.clone();
        let mut c = code;
        let mut inside = true;
        for (k, &d) in dims.iter().enumerate() {
            let step = c % 3;
            c /= 3;
            match step {
                0 if p[k] == 0 => inside = false,
                0 => p[k] -= 1,
                2 if p[k] + 1 >= d => inside = false,
                2 => p[k] += 1,
                _ => {}
            }
        }
        if inside && p != at {
            out.push(grid_index(dims, &p));
        }
    }
    out
}

/// Evenly spaced indices, about six, both ends included.
pub(super) fn coarse_points(n: usize) -> Vec<usize> {
    let stride = n.div_ceil(6).max(1);
    let mut pts: Vec<usize> = (0..n).step_by(stride).collect();
    if pts.last() != Some(&(n - 1)) {
        pts.push(n - 1);
    }
    pts
}

/// Sizes of the searched parameters, in plan order.
pub fn dims(params: &[Parameter]) -> Vec<usize> {
    params.iter().map(|p| p.values.len()).collect()
}

/// A grid value in words: "64" for one parameter, "a=2 b=64" for several.
pub fn point_label(params: &[Parameter], g: usize) -> String {
    let at = positions(&dims(params), g);
    if let [p] = params {
        return p.values.get(g).cloned().unwrap_or_default();
    }
    params
        .iter()
        .zip(at)
        .map(|(p, a)| format!("{}={}", p.name, p.values.get(a).map_or("?", String::as_str)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A grid value as (parameter name, its value) pairs, in plan order.
pub fn point(params: &[Parameter], g: usize) -> Vec<(&str, Option<&str>)> {
    params
        .iter()
        .zip(positions(&dims(params), g))
        .map(|(p, a)| (p.name.as_str(), p.values.get(a).map(String::as_str)))
        .collect()
}
