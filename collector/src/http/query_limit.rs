//! A cap on analytics queries: at most `running` at once on blocking threads, up to [`QUEUED_PER_RUNNING`]
//! times as many more waiting their turn (first come, first served), and beyond that a refusal the
//! client can retry (503). So however many queries arrive, they hold a bounded number of threads and
//! store connections, and ingest and `/health` never wait behind them.

use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Queries that may wait, per query allowed to run: the dashboard sends about a dozen at each refresh.
pub const QUEUED_PER_RUNNING: usize = 8;

pub struct QueryLimit {
    admitted: Arc<Semaphore>,
    running: Arc<Semaphore>,
}

/// The right to run one query; hold it until the query has finished (move it into the blocking task:
/// a query goes on there after its client has gone).
pub struct QueryPermit {
    _admitted: OwnedSemaphorePermit,
    _running: OwnedSemaphorePermit,
}

impl QueryLimit {
    /// `running` from 1 to 256 (start-up validates it), well under tokio's 512 blocking threads.
    pub fn new(running: usize) -> QueryLimit {
        QueryLimit { admitted: Arc::new(Semaphore::new(running * (1 + QUEUED_PER_RUNNING))), running: Arc::new(Semaphore::new(running)) }
    }

    /// Waits for a turn to run a query; `None` at once when the queue is full.
    pub async fn enter(&self) -> Option<QueryPermit> {
        let admitted = self.admitted.clone().try_acquire_owned().ok()?;
        let running = self.running.clone().acquire_owned().await.ok()?;
        Some(QueryPermit { _admitted: admitted, _running: running })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_some_queues_more_refuses_the_rest() {
        let limit = Arc::new(QueryLimit::new(1));
        let first = limit.enter().await.expect("runs");
        let waiting: Vec<_> = (0..QUEUED_PER_RUNNING).map(|_| tokio::spawn({
            let limit = limit.clone();
            async move { limit.enter().await.is_some() }
        })).collect();
        tokio::task::yield_now().await;
        while limit.admitted.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        assert!(limit.enter().await.is_none(), "the queue is full");
        drop(first);
        for task in waiting {
            assert!(task.await.unwrap(), "each waiting query runs in turn");
        }
        assert!(limit.enter().await.is_some());
    }
}
