//! The run-level hooks of the chain: instructions and settings, deferred calls, the run and
//! its nodes, the event stream.

use super::*;

impl<D: Send + Sync + 'static> Capabilities<D> {
    /// The capabilities' instructions, in order.
    pub(crate) async fn instructions(&self, ctx: &RunContext<D>) -> Result<Vec<String>, AgentRunError> {
        let mut out = Vec::new();
        for c in &self.chain.caps {
            if let Some(i) = guard(&**c, "instructions", || c.instructions(ctx)).await? {
                out.push(i);
            }
        }
        Ok(out)
    }

    /// The capabilities' model settings for this step, merged in order over `base`.
    pub(crate) fn model_settings(
        &self,
        ctx: &RunContext<D>,
        base: Option<Arc<ModelSettings>>,
    ) -> Result<Option<Arc<ModelSettings>>, AgentRunError>
    where
        D: Clone,
    {
        let mut settings = base;
        // Each capability sees, in `ctx.model_settings`, the settings layered so far (a context
        // of its own once an earlier capability added some).
        let mut seen: Option<RunContext<D>> = None;
        for c in &self.chain.caps {
            let view = seen.as_ref().unwrap_or(ctx);
            if let Some(s) = sync_guard(&**c, "model_settings", || c.model_settings(view))? {
                settings = Some(Arc::new(match settings {
                    Some(b) => b.merged(&s),
                    None => s,
                }));
                seen.get_or_insert_with(|| ctx.clone()).model_settings = settings.as_deref().cloned();
            }
        }
        Ok(settings)
    }

    /// Offers deferred calls to each capability in order; returns the results they gave
    /// (possibly for only some of the calls).
    pub(crate) async fn handle_deferred(
        &self,
        ctx: &RunContext<D>,
        requests: &DeferredToolRequests,
    ) -> Result<DeferredToolResults, AgentRunError> {
        let mut results = DeferredToolResults::new();
        let mut remaining = requests.clone();
        for c in &self.chain.caps {
            if remaining.is_empty() {
                break;
            }
            let given = guard(&**c, "handle_deferred_tool_calls", || c.handle_deferred_tool_calls(ctx, &remaining));
            if let Some(r) = given.await? {
                remaining = remaining.remaining(&r);
                results.update(r);
            }
        }
        Ok(results)
    }

    /// The messages each capability has to deliver at `at`, in order.
    pub(crate) async fn pending_messages(
        &self,
        ctx: &RunContext<D>,
        at: DeliveryPoint,
    ) -> Result<Delivery, AgentRunError> {
        let mut delivery = Delivery::default();
        for c in &self.chain.caps {
            delivery.extend(guard_run(&**c, "pending_messages", || c.pending_messages(ctx, at)).await?);
        }
        Ok(delivery)
    }

    pub(crate) async fn prepare_output_tools(
        &self,
        ctx: &RunContext<D>,
        mut tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        for c in &self.chain.caps {
            tools = guard_run(&**c, "prepare_output_tools", || c.prepare_output_tools(ctx, tools)).await?;
        }
        Ok(tools)
    }

    pub(crate) async fn before_run(&self, ctx: &RunContext<D>) -> Result<(), AgentRunError> {
        for c in self.stage(HookStage::Run) {
            guard_run(&**c, "before_run", || c.before_run(ctx)).await?;
        }
        Ok(())
    }

    pub(crate) async fn after_run(
        &self,
        ctx: &RunContext<D>,
        mut output: RunOutput,
    ) -> Result<RunOutput, AgentRunError> {
        for c in self.stage(HookStage::Run).iter().rev() {
            output = guard_run(&**c, "after_run", || c.after_run(ctx, output)).await?;
        }
        Ok(output)
    }

    /// Offers a run's error to each `on_run_error` (the last capability first) until one
    /// recovers.
    pub(crate) async fn on_run_error(
        &self,
        ctx: &RunContext<D>,
        error: AgentRunError,
    ) -> Result<RunOutput, AgentRunError> {
        let mut outcome = Err(error);
        for c in self.stage(HookStage::Run).iter().rev() {
            match outcome {
                Err(e) => outcome = guard_run(&**c, "on_run_error", || c.on_run_error(ctx, e)).await,
                Ok(_) => break,
            }
        }
        outcome
    }

    /// The run through every `wrap_run`.
    pub(crate) fn run<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        core: &'a RunCore<'a>,
    ) -> BoxFuture<'a, Result<RunOutput, AgentRunError>> {
        match self.stage(HookStage::Run).get(i) {
            Some(cap) => Box::pin(guard_run(&**cap, "wrap_run", move || {
                cap.wrap_run(ctx, RunNext::new(move || self.run(i + 1, ctx, core)))
            })),
            None => core(),
        }
    }

    /// One node through every `wrap_node_run`, then the before / after / error hooks.
    pub(crate) fn node<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        node: AgentNode,
        core: &'a NodeCore<'a>,
    ) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> {
        if self.stage(HookStage::Node).is_empty() {
            return core(node);
        }
        Box::pin(async move {
            match self.stage(HookStage::Node).get(i) {
                Some(cap) => {
                    let next = NodeNext::new(move |n| self.node(i + 1, ctx, n, core));
                    guard_run(&**cap, "wrap_node_run", || cap.wrap_node_run(ctx, node, next)).await
                }
                None => {
                    let mut node = node;
                    for c in self.stage(HookStage::Node) {
                        node = guard_run(&**c, "before_node_run", || c.before_node_run(ctx, node)).await?;
                    }
                    let mut result = match core(node.clone()).await {
                        Ok(r) => r,
                        Err(error) => {
                            let mut outcome = Err(error);
                            for c in self.stage(HookStage::Node).iter().rev() {
                                match outcome {
                                    Err(e) => {
                                        outcome =
                                            guard_run(&**c, "on_node_run_error", || c.on_node_run_error(ctx, &node, e))
                                                .await
                                    }
                                    Ok(_) => break,
                                }
                            }
                            outcome?
                        }
                    };
                    for c in self.stage(HookStage::Node).iter().rev() {
                        result = guard_run(&**c, "after_node_run", || c.after_node_run(ctx, &node, result)).await?;
                    }
                    Ok(result)
                }
            }
        })
    }

    /// Whether any capability wraps the event stream.
    pub(crate) fn wraps_event_stream(&self) -> Result<bool, AgentRunError> {
        for c in &self.chain.caps {
            if sync_guard(&**c, "wraps_event_stream", || c.wraps_event_stream())? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The event stream through every `wrap_event_stream`, the first capability outermost. A
    /// panic while a capability's stream is polled ends that stream (and so the events' way to
    /// the handler); the error is kept for [`Capabilities::stream_panic`].
    pub(crate) fn wrap_event_stream(
        &self,
        ctx: &RunContext<D>,
        mut events: EventBoxStream,
    ) -> Result<EventBoxStream, AgentRunError> {
        use futures::StreamExt;
        for c in self.chain.caps.iter().rev() {
            if sync_guard(&**c, "wraps_event_stream", || c.wraps_event_stream())? {
                let wrapped = sync_guard(&**c, "wrap_event_stream", || c.wrap_event_stream(ctx, events))?;
                let cap = c.clone();
                let panics = self.panics.clone();
                events = AssertUnwindSafe(wrapped)
                    .catch_unwind()
                    .scan((), move |_, item| {
                        futures::future::ready(match item {
                            Ok(event) => Some(event),
                            Err(p) => {
                                let error = hook_panicked(&*cap, "wrap_event_stream", p);
                                panics.lock().unwrap_or_else(|p| p.into_inner()).push(error);
                                None
                            }
                        })
                    })
                    .boxed();
            }
        }
        Ok(events)
    }

    /// The first panic caught while the event stream was polled, if any.
    pub(crate) fn stream_panic(&self) -> Option<AgentRunError> {
        let panics = self.panics.lock().unwrap_or_else(|p| p.into_inner());
        panics
            .iter()
            .find(|e| matches!(e, AgentRunError::CapabilityPanicked { hook, .. } if hook == "wrap_event_stream"))
            .cloned()
    }
}
