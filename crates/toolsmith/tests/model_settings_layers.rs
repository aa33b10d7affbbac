//! Model settings are layered as Pydantic AI layers them: the agent's, then each capability's
//! (each seeing the layers below it in `ctx.model_settings`), then the run's; the hooks around
//! the model request see the result.

use std::sync::{Arc, Mutex};

use toolsmith::capability::{Capability, HookStage, ModelRequestContext};
use toolsmith::prelude::*;

/// Sets a temperature.
struct Warm(f64);

impl Capability<()> for Warm {
    fn model_settings(&self, _ctx: &RunContext<()>) -> Option<ModelSettings> {
        Some(ModelSettings::new().temperature(self.0))
    }
}

/// Sets `max_tokens` from the temperature it sees, and records what the request hook sees.
struct Reader {
    saw: Arc<Mutex<Vec<String>>>,
}

impl Capability<()> for Reader {
    fn hooks_stage(&self, stage: HookStage) -> bool {
        stage == HookStage::ModelRequest
    }
    fn model_settings(&self, ctx: &RunContext<()>) -> Option<ModelSettings> {
        let t = ctx.model_settings.as_ref().and_then(|s| s.temperature);
        self.saw.lock().unwrap().push(format!("layers below: {t:?}"));
        Some(ModelSettings::new().max_tokens((t.unwrap_or(0.0) * 100.0) as u32))
    }
    async fn before_model_request(
        &self,
        ctx: &RunContext<()>,
        request: ModelRequestContext,
    ) -> Result<ModelRequestContext, AgentRunError> {
        let s = ctx.model_settings.clone().unwrap_or_default();
        self.saw.lock().unwrap().push(format!("hook: {:?} {:?}", s.temperature, s.max_tokens));
        Ok(request)
    }
}

fn recording_model(sent: Arc<Mutex<Option<ModelSettings>>>) -> FunctionModel {
    FunctionModel::new(move |_messages, info| {
        *sent.lock().unwrap() = info.model_settings.clone();
        async { Ok(ModelResponse::text("ok")) }
    })
}

#[tokio::test]
async fn agent_then_capabilities_then_run() {
    let saw = Arc::new(Mutex::new(Vec::new()));
    let sent = Arc::new(Mutex::new(None));
    let agent = Agent::builder(recording_model(sent.clone()))
        .model_settings(ModelSettings::new().temperature(0.1).timeout(std::time::Duration::from_secs(9)))
        .capability(Warm(0.5))
        .capability(Reader { saw: saw.clone() })
        .build()
        .unwrap();

    // Without run settings: the capabilities' temperature wins over the agent's.
    agent.run("hi").await.unwrap();
    let s = sent.lock().unwrap().clone().unwrap();
    assert_eq!(
        (s.temperature, s.max_tokens, s.timeout),
        (Some(0.5), Some(50), Some(std::time::Duration::from_secs(9)))
    );
    assert_eq!(*saw.lock().unwrap(), ["layers below: Some(0.5)", "hook: Some(0.5) Some(50)"]);

    // The run's own settings come last: its temperature wins over the capability's, which
    // still saw only the layers below it (the agent's and the first capability's).
    saw.lock().unwrap().clear();
    agent.run("hi").model_settings(ModelSettings::new().temperature(0.9)).await.unwrap();
    let s = sent.lock().unwrap().clone().unwrap();
    assert_eq!(
        (s.temperature, s.max_tokens, s.timeout),
        (Some(0.9), Some(50), Some(std::time::Duration::from_secs(9)))
    );
    assert_eq!(*saw.lock().unwrap(), ["layers below: Some(0.5)", "hook: Some(0.9) Some(50)"]);
}
