//! Messages the capabilities deliver into the run's history mid-run (Pydantic AI's
//! `ctx.enqueue` and its queue drain): before each model request, and when the run would end.

use std::sync::Arc;

use super::AgentRun;
use crate::capability::DeliveryPoint;
use crate::error::AgentRunError;

impl<D: Clone + Send + Sync + 'static, O: Send + 'static> AgentRun<D, O> {
    /// Writes what the capabilities have to deliver at `at` into the history, each a request of
    /// its own (as Pydantic AI's queue drain writes enqueued content); whether there was any.
    pub(super) async fn deliver_pending(&mut self, at: DeliveryPoint) -> Result<bool, AgentRunError> {
        let ctx = self.context();
        let delivery = self.caps.pending_messages(&ctx, at).await?;
        // The context shares the history: dropped first, the history grows in place.
        drop(ctx);
        if !delivery.retries.is_empty() {
            let counts = Arc::make_mut(&mut self.state.retries);
            for (tool, count) in delivery.retries {
                match count {
                    0 => counts.remove(&tool),
                    n => counts.insert(tool, n),
                };
            }
        }
        let delivered = !delivery.requests.is_empty();
        for mut request in delivery.requests {
            request.run_id.get_or_insert_with(|| self.run_id.clone());
            request.conversation_id.get_or_insert_with(|| self.conversation_id.clone());
            self.state.push(request);
        }
        Ok(delivered)
    }
}
