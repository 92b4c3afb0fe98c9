//! What the HTML report is made from: everything already computed.

use crate::analysis::{HistoryData, StoredCellFigures};
use crate::metrics::Sample;
use crate::store::StoredSession;

/// Bars drawn at most in the run-order chart; more runs are averaged in
/// consecutive groups (and the chart says so).
pub const MAX_BARS: usize = 1500;

/// One benchmark of the reported session.
#[derive(Clone, Debug)]
pub struct CellData {
    pub name: String,
    pub command: String,
    pub parameters: Vec<(String, String)>,
    /// All runs (cmdscope metrics), in run order.
    pub samples: Vec<Sample>,
    /// The time values used for statistics (wall time, or Go's sec/op).
    pub times: Vec<f64>,
    /// `run --monitor` counts per run: (`monitor_NAME`, one value per run).
    pub monitor: Vec<(String, Vec<f64>)>,
    /// The figures shown of it, computed by `analysis`.
    pub figures: StoredCellFigures,
}

#[derive(Clone, Debug)]
pub struct ReportData {
    pub store: String,
    pub session: StoredSession,
    pub cells: Vec<CellData>,
    /// The session's comparisons by the comparison engine (wall time).
    pub comparisons: Vec<crate::analysis::comparison::Comparison>,
    pub history: Vec<HistoryData>,
    pub notes: Vec<String>,
    /// A one-parameter sweep's or search's values as good as the best (see
    /// `analysis::stored::as_good`), shaded on its curve.
    pub as_good: Option<SweepSet>,
    /// A session run in concurrency mode: its throughput, host view,
    /// throughput comparisons and scaling curves.
    pub concurrency: Option<ConcurrencyData>,
    /// A suite run's merged report: the settings its sessions were stored
    /// with, each set once, one "Settings" row each (a single session's
    /// are its `session.settings`).
    pub suite_settings: Vec<crate::run::settings::Settings>,
}

/// Concurrency mode's answers for a stored session (computed by
/// `analysis::concurrency` from its stored batches) and the session as
/// `run` held it, whose cells they index.
#[derive(Clone, Debug)]
pub struct ConcurrencyData {
    pub session: std::rc::Rc<crate::run::session::Session>,
    pub analysis: crate::analysis::concurrency::Concurrency,
}

/// The values of a sweep's parameter as good as the best, as ranges.
pub use crate::analysis::stored::AsGood as SweepSet;
