//! The hooks around a step's calls: the output's validation and processing, `prepare_tools`,
//! the model request, and a tool call's validation and execution.

use super::*;

impl<D: Send + Sync + 'static> Capabilities<D> {
    /// The validation (`stage` Validate) or the processing (Process) of the output through
    /// every `wrap_output_*`, then the before / error / after hooks of that stage. A retry from
    /// the processing is an answer, not a failure: it skips `on_output_process_error`.
    pub(crate) fn output<'a>(
        &'a self,
        stage: OutputStage,
        i: usize,
        ctx: &'a RunContext<D>,
        info: OutputInfo<'a>,
        value: Value,
        core: &'a ValidateCore<'a>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        use OutputStage::{Process, Validate};
        if self.stage(stage.hook_stage()).is_empty() {
            return core(value);
        }
        Box::pin(async move {
            let Some(cap) = self.stage(stage.hook_stage()).get(i) else {
                let mut value = value;
                for c in self.stage(stage.hook_stage()) {
                    value = match stage {
                        Validate => {
                            self.guard_tool(&**c, "before_output_validate", || {
                                c.before_output_validate(ctx, info, value)
                            })
                            .await?
                        }
                        Process => {
                            self.guard_tool(&**c, "before_output_process", || c.before_output_process(ctx, info, value))
                                .await?
                        }
                    };
                }
                let mut out = match core(value.clone()).await {
                    Ok(v) => v,
                    Err(e @ ToolError::Retry(_)) if stage == Process => return Err(e),
                    // A panic is not the output's failure: no error hook sees it.
                    Err(e @ ToolError::Panicked { .. }) => return Err(e),
                    Err(error) => {
                        let mut outcome = Err(error);
                        for c in self.stage(stage.hook_stage()).iter().rev() {
                            let Err(e) = outcome else { break };
                            if matches!(e, ToolError::Panicked { .. }) {
                                return Err(e);
                            }
                            outcome = match stage {
                                Validate => {
                                    self.guard_tool(&**c, "on_output_validate_error", || {
                                        c.on_output_validate_error(ctx, info, &value, e)
                                    })
                                    .await
                                }
                                Process => {
                                    self.guard_tool(&**c, "on_output_process_error", || {
                                        c.on_output_process_error(ctx, info, &value, e)
                                    })
                                    .await
                                }
                            };
                        }
                        outcome?
                    }
                };
                for c in self.stage(stage.hook_stage()).iter().rev() {
                    out = match stage {
                        Validate => {
                            self.guard_tool(&**c, "after_output_validate", || c.after_output_validate(ctx, info, out))
                                .await?
                        }
                        Process => {
                            self.guard_tool(&**c, "after_output_process", || c.after_output_process(ctx, info, out))
                                .await?
                        }
                    };
                }
                return Ok(out);
            };
            let next = OutputNext::new(move |v| self.output(stage, i + 1, ctx, info, v, core));
            match stage {
                Validate => {
                    self.guard_tool(&**cap, "wrap_output_validate", || cap.wrap_output_validate(ctx, info, value, next))
                        .await
                }
                Process => {
                    self.guard_tool(&**cap, "wrap_output_process", || cap.wrap_output_process(ctx, info, value, next))
                        .await
                }
            }
        })
    }

    /// Whether any capability's `prepare_tools` may change the tools.
    pub(crate) fn has_prepare_tools(&self) -> Result<bool, AgentRunError> {
        for c in &self.chain.caps {
            if sync_guard(&**c, "has_prepare_tools", || c.has_prepare_tools())? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    pub(crate) async fn prepare_tools(
        &self,
        ctx: &RunContext<D>,
        mut tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        for c in &self.chain.caps {
            tools = guard_run(&**c, "prepare_tools", || c.prepare_tools(ctx, tools)).await?;
        }
        Ok(tools)
    }

    /// The model request through every `wrap_model_request`, then the before / after hooks.
    pub(crate) fn model_request<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
        core: &'a ModelCore<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> {
        if self.stage(HookStage::ModelRequest).is_empty() {
            return core(request);
        }
        Box::pin(async move {
            match self.stage(HookStage::ModelRequest).get(i) {
                Some(cap) => {
                    let next = ModelRequestNext::new(move |r| self.model_request(i + 1, ctx, r, core));
                    guard_run(&**cap, "wrap_model_request", || cap.wrap_model_request(ctx, request, next)).await
                }
                None => {
                    let mut request = request;
                    for c in self.stage(HookStage::ModelRequest) {
                        request =
                            guard_run(&**c, "before_model_request", || c.before_model_request(ctx, request)).await?;
                    }
                    let mut response = match core(request.clone()).await {
                        Ok(r) => r,
                        Err(e @ AgentRunError::Retry(_)) => return Err(e),
                        Err(error) => {
                            let mut outcome = Err(error);
                            for c in self.stage(HookStage::ModelRequest).iter().rev() {
                                match outcome {
                                    Err(e @ AgentRunError::Retry(_)) => return Err(e),
                                    Err(e) => {
                                        outcome = guard_run(&**c, "on_model_request_error", || {
                                            c.on_model_request_error(ctx, &request, e)
                                        })
                                        .await
                                    }
                                    Ok(_) => break,
                                }
                            }
                            outcome?
                        }
                    };
                    for c in self.stage(HookStage::ModelRequest).iter().rev() {
                        response =
                            guard_run(&**c, "after_model_request", || c.after_model_request(ctx, &request, response))
                                .await?;
                    }
                    Ok(response)
                }
            }
        })
    }

    /// The validation of one call through every `wrap_tool_validate`, then the other hooks.
    pub(crate) fn validate<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        core: &'a ValidateCore<'a>,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        if self.stage(HookStage::ToolValidate).is_empty() {
            return core(args);
        }
        Box::pin(async move {
            match self.stage(HookStage::ToolValidate).get(i) {
                Some(cap) => {
                    let next = ToolValidateNext::new(move |a| self.validate(i + 1, ctx, call, a, core));
                    self.guard_tool(&**cap, "wrap_tool_validate", || cap.wrap_tool_validate(ctx, call, args, next))
                        .await
                }
                None => {
                    let mut args = args;
                    for c in self.stage(HookStage::ToolValidate) {
                        args = self
                            .guard_tool(&**c, "before_tool_validate", || c.before_tool_validate(ctx, call, args))
                            .await?;
                    }
                    let mut validated = match core(args).await {
                        Ok(v) => v,
                        // A panic is not a validation failure: no error hook sees it.
                        Err(e @ ToolError::Panicked { .. }) => return Err(e),
                        Err(error) => {
                            let mut outcome = Err(error);
                            for c in self.stage(HookStage::ToolValidate).iter().rev() {
                                match outcome {
                                    Err(e @ ToolError::Panicked { .. }) => return Err(e),
                                    Err(e) => {
                                        outcome = self
                                            .guard_tool(&**c, "on_tool_validate_error", || {
                                                c.on_tool_validate_error(ctx, call, e)
                                            })
                                            .await
                                    }
                                    Ok(_) => break,
                                }
                            }
                            outcome?
                        }
                    };
                    for c in self.stage(HookStage::ToolValidate).iter().rev() {
                        validated = self
                            .guard_tool(&**c, "after_tool_validate", || c.after_tool_validate(ctx, call, validated))
                            .await?;
                    }
                    Ok(validated)
                }
            }
        })
    }

    /// The execution of one call through every `wrap_tool_execute`, then the other hooks.
    pub(crate) fn execute<'a>(
        &'a self,
        i: usize,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        core: &'a ExecuteCore<'a>,
        ran: &'a AtomicBool,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        if self.stage(HookStage::ToolExecute).is_empty() {
            return core(args);
        }
        Box::pin(async move {
            match self.stage(HookStage::ToolExecute).get(i) {
                Some(cap) => {
                    let next = ToolExecuteNext::new(move |a| self.execute(i + 1, ctx, call, a, core, ran), Some(ran));
                    self.guard_tool(&**cap, "wrap_tool_execute", || cap.wrap_tool_execute(ctx, call, args, next)).await
                }
                None => {
                    let mut args = args;
                    for c in self.stage(HookStage::ToolExecute) {
                        args = self
                            .guard_tool(&**c, "before_tool_execute", || c.before_tool_execute(ctx, call, args))
                            .await?;
                    }
                    let mut output = match core(args.clone()).await {
                        Ok(o) => o,
                        Err(e) if passes_through(&e) => return Err(e),
                        Err(error) => {
                            let mut outcome = Err(error);
                            for c in self.stage(HookStage::ToolExecute).iter().rev() {
                                match outcome {
                                    Err(e @ ToolError::Panicked { .. }) => return Err(e),
                                    Err(e) => {
                                        outcome = self
                                            .guard_tool(&**c, "on_tool_execute_error", || {
                                                c.on_tool_execute_error(ctx, call, &args, e)
                                            })
                                            .await
                                    }
                                    Ok(_) => break,
                                }
                            }
                            outcome?
                        }
                    };
                    for c in self.stage(HookStage::ToolExecute).iter().rev() {
                        output = self
                            .guard_tool(&**c, "after_tool_execute", || c.after_tool_execute(ctx, call, &args, output))
                            .await?;
                    }
                    Ok(output)
                }
            }
        })
    }
}
