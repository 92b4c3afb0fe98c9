//! The replay measurer: a stored search session raced again on its
//! stored runs. Each round the race asks for is the next stored round; its
//! values' runs (and batches) are the next ones stored for them, as many
//! as the round took in, handed to `Rounds::take` as the process measurer
//! hands a round it ran, so the race sees the values it saw and decides
//! as it decided; a search of a monitor's count reads each round's counts
//! from the stored ones, as the process measurer reads the live monitor's.
//! A round the race asks for that is not the stored one is
//! noted (`differs`) and ends the race: the store then does not hold this
//! race.

use super::options::SearchOptions;
use super::rounds::Rounds;
use crate::analysis::source::{RunSeries, Source};
use crate::error::{Error, Result};
use crate::run::plan::Cell;
use crate::run::session::{BatchRecord, CellResult};
use crate::store::RaceRound;

pub(super) struct Replayer<'a> {
    /// Every grid value's stored runs and batches, in grid order.
    stored: &'a [CellResult],
    /// A monitor's stored counts, by grid value: one per stored run.
    series: Option<&'a dyn RunSeries>,
    race: &'a [RaceRound],
    /// The next stored round.
    next: usize,
    /// The round (from 1) the race asked for differently, if it did.
    differs: Option<usize>,
    /// What ended the stored session, which ends the race at its
    /// stopping round.
    stop: Option<Error>,
    rounds: Rounds,
}

impl<'a> Replayer<'a> {
    pub(super) fn new(
        stored: &'a [CellResult],
        series: Option<&'a dyn RunSeries>,
        cells: &[Cell],
        race: &'a [RaceRound],
        opts: &SearchOptions,
        n: usize,
        stop: Option<Error>,
    ) -> Replayer<'a> {
        Replayer {
            stored,
            series,
            race,
            next: 0,
            differs: None,
            stop,
            rounds: Rounds::new(cells, opts, n),
        }
    }

    /// The round (from 1) at which the race left the stored one: one it
    /// asked for differently, or the first it never asked for.
    pub(super) fn differs(&self) -> Option<usize> {
        self.differs
            .or_else(|| (self.next < self.race.len()).then_some(self.next + 1))
    }

    /// The stored round of value `i` that starts at its run `from` and
    /// takes `runs` runs, as the round's result (batches numbered within
    /// the round, as the runner numbers them).
    fn result(&self, i: usize, from: usize, runs: usize) -> Option<CellResult> {
        let cell = self.stored.get(i)?;
        let samples = cell.samples.get(from..from.checked_add(runs)?)?.to_vec();
        let batches: Vec<BatchRecord> = (cell.batches.iter())
            .filter(|b| (from..from + runs).contains(&b.first_sample))
            .enumerate()
            .map(|(k, b)| BatchRecord {
                block: k + 1,
                first_sample: b.first_sample - from,
                ..b.clone()
            })
            .collect();
        Some(CellResult {
            cell: cell.cell.clone(),
            samples,
            batches,
        })
    }

    /// Takes in the next stored round, if it is the one asked for.
    fn round(&mut self, points: &[usize], blocks: usize) -> Result<usize> {
        let round = self.next + 1;
        let differs = || Error::from(crate::error::SearchError::StoredRaceDiffers { round });
        let Some(stored) = self.race.get(self.next) else {
            // A session that stopped before its round took anything in
            // ends here.
            return Err(self.stop.take().unwrap_or_else(|| {
                self.differs = Some(round);
                differs()
            }));
        };
        // Each value's round starts after the runs earlier rounds took in.
        let from: Vec<usize> = (points.iter())
            .map(|&i| self.rounds.samples.get(i).map_or(0, Vec::len))
            .collect();
        let results: Option<Vec<CellResult>> =
            if stored.points == points && stored.blocks <= blocks && stored.blocks > 0 {
                (points.iter().zip(&stored.runs).zip(&from))
                    .map(|((&i, &runs), &from)| self.result(i, from, runs))
                    .collect()
            } else {
                None
            };
        let Some(mut results) = results.filter(|r| r.len() == points.len()) else {
            self.differs = Some(round);
            return Err(differs());
        };
        self.next += 1;
        // A monitor's counts of value i in this round: its stored counts
        // of the runs the round took in.
        let (source, counts) = (self.rounds.source().clone(), self.series);
        let series = |i: usize, runs: usize| match (&source, counts) {
            (Source::Series(name), Some(m)) => {
                let start = (points.iter().position(|&p| p == i)).map_or(0, |k| from[k]);
                let all = m.series(name, i);
                (all.get(start..start.saturating_add(runs)))
                    .map(<[f64]>::to_vec)
                    .unwrap_or_default()
            }
            _ => Vec::new(),
        };
        self.rounds.take(
            points,
            stored.blocks,
            &mut results,
            series,
            stored.stopped,
            stored.rss_floor,
        );
        if stored.stopped {
            let stopped = || Error::Failed("the search stopped".into());
            return Err(self.stop.take().unwrap_or_else(stopped));
        }
        Ok(stored.blocks)
    }
}

super::rounds::measured_in_rounds!(Replayer<'_>);
