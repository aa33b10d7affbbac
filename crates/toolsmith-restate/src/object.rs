//! A ready-made Restate virtual object that serves one agent's conversations.

use std::sync::Arc;

use futures::future::BoxFuture;
use restate_sdk::prelude::*;
use serde::Serialize;
use serde_json::Value;
use toolsmith::messages::ModelMessage;

use crate::decision::{Decision, PendingCall, Settle};
use crate::session::{DurableAgent, TurnReply, TurnRequest};

/// A Restate virtual object named `AgentSession`, keyed by conversation id, that serves a
/// [`DurableAgent`]'s conversations. Its handlers, at
/// `<ingress>/AgentSession/<conversation>/<handler>`:
///
/// - `turn` (exclusive: one turn at a time per conversation): `{"prompt": "..."}` → the
///   [`TurnReply`] (`output`, `new_messages`, `usage`);
/// - `decide` (shared): a [`Decision`] on a call the turn waits on (exactly one decision
///   settles a call: the exclusive `settle` handler, under a key of the call's own, records it;
///   `decide` calls it, and a client never needs to);
/// - `pending` (shared): the [`PendingCall`]s the turn waits on;
/// - `history` (shared): the conversation's messages.
///
/// To serve several agents from one deployment, or under another name, write a virtual
/// object of your own whose handlers call the same [`DurableAgent`] methods.
///
/// ```no_run
/// use toolsmith_restate::restate_sdk::prelude::*;
/// use toolsmith::prelude::*;
/// use toolsmith_restate::{AgentSession, DurableAgent};
///
/// # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = Agent::builder(TestModel::default()).allow_deferred().build()?;
/// let session = AgentSession::new(DurableAgent::new(agent));
/// HttpServer::new(Endpoint::builder().bind(session).build())
///     .listen_and_serve("127.0.0.1:9080".parse()?)
///     .await;
/// # Ok(())
/// # }
/// ```
pub struct AgentSession {
    agent: Arc<dyn Turns>,
}

impl AgentSession {
    /// Serves `agent`'s conversations.
    pub fn new<D, O>(agent: DurableAgent<D, O>) -> Self
    where
        D: Clone + Send + Sync + 'static,
        O: Serialize + Send + Sync + 'static,
    {
        AgentSession { agent: Arc::new(agent.object_name("AgentSession")) }
    }
}

/// A durable agent with its output type erased to JSON.
trait Turns: Send + Sync {
    fn object(&self) -> &str;
    fn turn<'a>(
        &'a self,
        ctx: &'a ObjectContext<'a>,
        request: TurnRequest,
    ) -> BoxFuture<'a, Result<TurnReply<Value>, HandlerError>>;
}

impl<D, O> Turns for DurableAgent<D, O>
where
    D: Clone + Send + Sync + 'static,
    O: Serialize + Send + Sync + 'static,
{
    fn object(&self) -> &str {
        &self.object
    }

    fn turn<'a>(
        &'a self,
        ctx: &'a ObjectContext<'a>,
        request: TurnRequest,
    ) -> BoxFuture<'a, Result<TurnReply<Value>, HandlerError>> {
        Box::pin(async move {
            let reply = DurableAgent::turn(self, ctx, request).await?;
            let output = serde_json::to_value(&reply.output)
                .map_err(|e| TerminalError::new(format!("the output does not serialise as JSON: {e}")))?;
            Ok(TurnReply { output, new_messages: reply.new_messages, usage: reply.usage })
        })
    }
}

#[restate_sdk::object]
impl AgentSession {
    /// One turn of the conversation.
    #[handler]
    async fn turn(
        &self,
        ctx: ObjectContext<'_>,
        Json(request): Json<TurnRequest>,
    ) -> Result<Json<TurnReply<Value>>, HandlerError> {
        Ok(Json(self.agent.turn(&ctx, request).await?))
    }

    /// A decision on a waiting call.
    #[handler]
    async fn decide(&self, ctx: SharedObjectContext<'_>, Json(decision): Json<Decision>) -> Result<(), HandlerError> {
        crate::decision::decide(&ctx, self.agent.object(), decision).await
    }

    /// Records the decision that settles a call (called by `decide`).
    #[handler]
    async fn settle(&self, ctx: ObjectContext<'_>, Json(settle): Json<Settle>) -> Result<(), HandlerError> {
        crate::decision::settle(&ctx, settle).await
    }

    /// The calls the current turn waits on.
    #[handler]
    async fn pending(&self, ctx: SharedObjectContext<'_>) -> Result<Json<Vec<PendingCall>>, HandlerError> {
        Ok(Json(crate::decision::pending(&ctx).await?))
    }

    /// The conversation's messages.
    #[handler]
    async fn history(&self, ctx: SharedObjectContext<'_>) -> Result<Json<Vec<ModelMessage>>, HandlerError> {
        Ok(Json(crate::session::history(&ctx).await?))
    }
}
