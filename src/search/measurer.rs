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
    /// round, in matching order (see `analysis::source::join_blocks`).
    fn pairs(&self, a: usize, b: usize) -> (Vec<f64>, Vec<f64>) {
        crate::analysis::source::join_blocks(&self.tagged(a), &self.tagged(b))
    }
    /// cmdscope's own peak resident size, for peak memory's floor.
    fn rss_floor(&self) -> Option<f64> {
        None
    }
}

/// Where a run was measured: (round, block within the round).
pub type Block = (u64, usize);
