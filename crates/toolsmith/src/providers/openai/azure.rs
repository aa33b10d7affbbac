//! Azure OpenAI through Chat Completions ([`AzureOpenAIBuilder`]): a deployment of a resource,
//! authenticated with the resource's `api-key` header.

use std::sync::Arc;

use reqwest::header::HeaderMap;

use super::chat::{MaxTokensField, OpenAIChatModel};
use super::presets::Quirks;
use crate::error::UserError;
use crate::providers::connection::{ConnectionOptions, DEFAULT_TIMEOUT, connection_builder_methods};
use crate::providers::http::header;

/// Builds an [`OpenAIChatModel`] for an Azure OpenAI deployment
/// ([`OpenAIChatModel::azure`]).
///
/// The requests go to `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...`
/// with the key in the `api-key` header. An endpoint that already names the
/// [v1 API](https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle)
/// (`https://RESOURCE.openai.azure.com/openai/v1`, any path ending in `/v1`) or an Azure AI
/// Foundry serverless endpoint (`*.models.ai.azure.com`) is used as the base URL instead: the
/// deployment goes in the body's `model`, and no `api-version` is sent (those APIs refuse it).
///
/// With [`from_env`](Self::from_env), what the builder lacks comes from `AZURE_OPENAI_ENDPOINT`,
/// `AZURE_OPENAI_API_KEY` and `OPENAI_API_VERSION`. The key is kept out of URLs, and out of error
/// messages even when the service echoes it. The model reports `azure` as its system.
///
/// ```
/// use toolsmith::model::Model;
/// use toolsmith::providers::OpenAIChatModel;
///
/// let model = OpenAIChatModel::azure("gpt-4o-prod")
///     .endpoint("https://my-resource.openai.azure.com")
///     .api_version("2024-10-21")
///     .api_key("0123456789abcdef")
///     .build()?;
/// assert_eq!(model.system(), "azure");
/// assert_eq!(model.base_url(), "https://my-resource.openai.azure.com/openai/deployments/gpt-4o-prod");
///
/// let v1 = OpenAIChatModel::azure("gpt-4o-prod")
///     .endpoint("https://my-resource.openai.azure.com/openai/v1/")
///     .api_key("0123456789abcdef")
///     .build()?;
/// assert_eq!(v1.base_url(), "https://my-resource.openai.azure.com/openai/v1");
/// # Ok::<(), toolsmith::UserError>(())
/// ```
#[derive(Clone)]
pub struct AzureOpenAIBuilder {
    deployment: String,
    opts: ConnectionOptions,
    api_version: Option<String>,
    max_tokens_field: Option<MaxTokensField>,
    from_env: bool,
}

impl std::fmt::Debug for AzureOpenAIBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AzureOpenAIBuilder")
            .field("deployment", &self.deployment)
            .field("api_version", &self.api_version)
            .finish_non_exhaustive()
    }
}

impl OpenAIChatModel {
    /// A builder for an Azure OpenAI deployment (see [`AzureOpenAIBuilder`]).
    pub fn azure(deployment: impl Into<String>) -> AzureOpenAIBuilder {
        AzureOpenAIBuilder {
            deployment: deployment.into(),
            opts: ConnectionOptions::default(),
            api_version: None,
            max_tokens_field: None,
            from_env: false,
        }
    }
}

fn env(var: &str) -> Option<String> {
    std::env::var(var).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

/// Whether a name fits in a URL path segment or query value as it is.
fn plain(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl AzureOpenAIBuilder {
    connection_builder_methods!();

    /// Sets the resource endpoint (`https://RESOURCE.openai.azure.com`), or a v1 base URL
    /// (`.../openai/v1`); the same as `base_url`.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.opts.base_url = Some(url.into());
        self
    }

    /// Sets the `api-version` of the deployment URL (`2024-10-21`, `2025-04-01-preview`...).
    pub fn api_version(mut self, version: impl Into<String>) -> Self {
        self.api_version = Some(version.into());
        self
    }

    /// Which field carries `max_tokens` (default `max_completion_tokens`, or `max_tokens` for a
    /// deployment named after a Mistral model, which Azure's Mistral gateway requires).
    pub fn max_tokens_field(mut self, field: MaxTokensField) -> Self {
        self.max_tokens_field = Some(field);
        self
    }

    /// Reads what the builder lacks from `AZURE_OPENAI_ENDPOINT`, `AZURE_OPENAI_API_KEY` and
    /// `OPENAI_API_VERSION`.
    pub fn from_env(mut self) -> Self {
        self.from_env = true;
        self
    }

    /// Builds the model. The endpoint and key are required, and so is the API version unless the
    /// endpoint is a v1 or serverless one.
    pub fn build(self) -> Result<OpenAIChatModel, UserError> {
        let Self { deployment, mut opts, api_version, max_tokens_field, from_env } = self;
        let from_env_var = |set: Option<String>, var: &str| set.or_else(|| if from_env { env(var) } else { None });
        let endpoint = from_env_var(opts.base_url.clone(), "AZURE_OPENAI_ENDPOINT").ok_or_else(|| {
            UserError::new(
                "Azure OpenAI needs the resource endpoint: pass it with `.endpoint(\"https://RESOURCE.openai.azure.com\")`, or set AZURE_OPENAI_ENDPOINT and add `.from_env()`",
            )
        })?;
        opts.api_key = from_env_var(opts.api_key.clone(), "AZURE_OPENAI_API_KEY").filter(|k| !k.trim().is_empty());
        if opts.api_key.is_none() {
            return Err(UserError::new(
                "Azure OpenAI needs the resource's API key: pass it with `.api_key(...)`, or set AZURE_OPENAI_API_KEY and add `.from_env()`",
            ));
        }
        let endpoint = endpoint.trim().trim_end_matches('/').to_string();
        let url = reqwest::Url::parse(&endpoint).map_err(|_| {
            UserError::new(format!(
                "`{}` is not an Azure OpenAI endpoint: give a URL such as `https://RESOURCE.openai.azure.com`",
                endpoint.split(['?', '#']).next().unwrap_or_default()
            ))
        })?;
        if !matches!(url.scheme(), "http" | "https") || url.query().is_some() || url.fragment().is_some() {
            return Err(UserError::new(
                "the Azure OpenAI endpoint must be an http(s) URL without a query (`https://RESOURCE.openai.azure.com`); set the API version with `.api_version(...)`",
            ));
        }
        let serverless = url.host_str().is_some_and(|h| h.ends_with(".models.ai.azure.com"));
        let (base_url, query) = if endpoint.ends_with("/v1") || serverless {
            if api_version.is_some() {
                return Err(UserError::new(
                    "`.api_version(...)` must not be set for an Azure OpenAI v1 or serverless endpoint: those APIs refuse `api-version`",
                ));
            }
            let base = if endpoint.ends_with("/v1") { endpoint } else { format!("{endpoint}/v1") };
            (base, None)
        } else {
            let version = from_env_var(api_version, "OPENAI_API_VERSION").ok_or_else(|| {
                UserError::new(
                    "Azure OpenAI needs an API version for a deployment endpoint: pass it with `.api_version(\"2024-10-21\")`, or set OPENAI_API_VERSION and add `.from_env()` (or give the v1 endpoint, `.../openai/v1`, which needs none)",
                )
            })?;
            if !plain(&version) {
                return Err(UserError::new(format!(
                    "`{version}` is not an Azure OpenAI API version: write it as `2024-10-21` or `2025-04-01-preview`"
                )));
            }
            if !plain(&deployment) {
                return Err(UserError::new(format!(
                    "`{deployment}` is not an Azure OpenAI deployment name: use the deployment's name (letters, digits, `-`, `_`, `.`)"
                )));
            }
            (format!("{endpoint}/openai/deployments/{deployment}"), Some(format!("api-version={version}")))
        };
        let mut auth = HeaderMap::new();
        if let Some(key) = opts.api_key.as_deref() {
            header(&mut auth, "api-key", key, true)?;
        }
        let http = opts.transport("azure", &deployment, auth, DEFAULT_TIMEOUT)?;
        let lower = deployment.to_ascii_lowercase();
        let mistral = ["mistral", "ministral", "magistral"].iter().any(|p| lower.starts_with(p));
        Ok(OpenAIChatModel {
            base_url,
            system: "azure".into(),
            http: Arc::new(http),
            max_tokens_field: max_tokens_field.unwrap_or(if mistral {
                MaxTokensField::MaxTokens
            } else {
                MaxTokensField::MaxCompletionTokens
            }),
            tool_choice_forcing: true,
            quirks: Quirks::default(),
            query,
            name: deployment,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_missing_is_named() {
        let e = OpenAIChatModel::azure("d").api_key("k").api_version("2024-10-21").build().unwrap_err();
        assert!(e.to_string().contains("AZURE_OPENAI_ENDPOINT") && e.to_string().contains(".endpoint("), "{e}");
        let e = OpenAIChatModel::azure("d").endpoint("https://r.openai.azure.com").build().unwrap_err();
        assert!(e.to_string().contains("AZURE_OPENAI_API_KEY") && e.to_string().contains(".api_key("), "{e}");
        let e = OpenAIChatModel::azure("d").endpoint("https://r.openai.azure.com").api_key("k").build().unwrap_err();
        assert!(e.to_string().contains("OPENAI_API_VERSION") && e.to_string().contains(".api_version("), "{e}");
    }

    #[test]
    fn bad_input_is_an_error() {
        let b = || OpenAIChatModel::azure("d").api_key("k").api_version("2024-10-21");
        assert!(b().endpoint("not a url").build().is_err());
        assert!(b().endpoint("ftp://r.openai.azure.com").build().is_err());
        assert!(b().endpoint("https://r.openai.azure.com?api-version=1").build().is_err());
        assert!(b().endpoint("https://r.openai.azure.com/openai/v1").build().is_err(), "v1 takes no version");
        assert!(OpenAIChatModel::azure("a/b").endpoint("https://r").api_key("k").api_version("1").build().is_err());
        assert!(OpenAIChatModel::azure("d").endpoint("https://r").api_key("k").api_version("1&x=2").build().is_err());
    }

    #[test]
    fn serverless_endpoints_use_v1() {
        let m = OpenAIChatModel::azure("Mistral-Large")
            .endpoint("https://m.eastus.models.ai.azure.com/")
            .api_key("k")
            .build()
            .unwrap();
        assert_eq!(m.base_url(), "https://m.eastus.models.ai.azure.com/v1");
        assert_eq!(m.max_tokens_field, MaxTokensField::MaxTokens);
        assert!(m.query.is_none());
    }
}
