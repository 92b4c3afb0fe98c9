//! How the search measures a grid value: the `Measurer` seam between the
//! race and what runs (the process measurer, a line of a larger grid, the
//! simulation), and the blocks that pair runs of one round.

use crate::error::Result;

/// Measures grid values: the real runner or a simulation.
pub trait Measurer {
    /// Measures every listed value `blocks` more times, in one round of
    /// `blocks` interleaved blocks (each block runs every listed value
    /// once).
    fn measure(&mut self, points: &[usize], blocks: usize) -> Result<()>;
    /// The searched metric's values of a grid value.
    fn values(&self, i: usize) -> Vec<f64>;
    /// Runs a grid value has.
    fn count(&self, i: usize) -> usize;
    /// Every run of grid value i with its block, in the order measured
    /// (blocks ascending); `None` for a run without a value (timed out,
    /// failed, removed).
    fn tagged(&self, i: usize) -> Vec<(Block, Option<f64>)>;
    /// The values of `a` and `b` measured in the same block of the same
    /// round, in matching order (see `join_blocks`).
    fn pairs(&self, a: usize, b: usize) -> (Vec<f64>, Vec<f64>) {
        join_blocks(&self.tagged(a), &self.tagged(b))
    }
    /// cmdscope's own peak resident size, for peak memory's floor.
    fn rss_floor(&self) -> Option<f64> {
        None
    }
}

/// Where a run was measured: (round, block within the round).
pub type Block = (u64, usize);

/// The values of two grid values from the blocks both were measured in,
/// in matching order; a run without a value (timed out, failed, removed)
/// drops its block for this pair only. Each side is in the order measured
/// (blocks ascending).
fn join_blocks(a: &[(Block, Option<f64>)], b: &[(Block, Option<f64>)]) -> (Vec<f64>, Vec<f64>) {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                if let (Some(p), Some(q)) = (a[i].1, b[j].1) {
                    x.push(p);
                    y.push(q);
                }
                i += 1;
                j += 1;
            }
        }
    }
    (x, y)
}
